package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store/memory"
)

// actingApprover answers in the name of whoever the test says: an
// approver channel that checks nothing about who may decide, so the gate's
// own rule is all that stands.
type actingApprover struct {
	mu   sync.Mutex
	user string
}

func (a *actingApprover) as(user string) { a.mu.Lock(); a.user = user; a.mu.Unlock() }

func (*actingApprover) Options(context.Context, plug.Request) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func (a *actingApprover) Verify(context.Context, plug.Request, []byte) (plug.Verified, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return plug.Verified{User: a.user, Evidence: []byte(`{"verdict":"yes"}`)}, nil
}

func (*actingApprover) Recheck(context.Context, plug.Answer) error { return nil }

// claimant is a name an answer may come back in, and whether it is a
// well-formed person's id at all.
type claimant struct {
	id     string
	person bool
}

// claimants: the people, agents, the gate's reserved kinds, groups, and
// spellings of "user:dana" and "user:erin" in other cases, with spaces,
// invisible and full-width characters, NULs and extra colons.
var claimants = []claimant{
	{"user:dana", true}, {"user:erin", true}, {"user:finn", true}, {"user:mallory", true},
	{"user:dana.", true}, {"user:dana+ops", true},
	{"agent:reports", false}, {"agent:helper", false}, {"policy:approvals-1", false}, {"policy:", false},
	{"grant:0123abcd", false}, {"model:judge", false}, {"group:finance", false}, {"gate:self", false},
	{"user:Dana", false}, {"User:dana", false}, {"USER:DANA", false}, {"user:DANA", false},
	{" user:dana", false}, {"user:dana ", false}, {"user:dana\n", false}, {"user:dana\x00", false},
	{"user:dana\u200b", false}, {"user:d\u0430na", false}, {"user:\uff44ana", false}, {"user:dan\u0301a", false},
	{"user:dana:erin", false}, {"user:", false}, {"", false}, {"dana", false}, {"user::dana", false},
	{"user:erin\u00ad", false}, {"user:ERIN", false}, {"user:" + strings.Repeat("a", 129), false},
}

const approverAttackVersion = "approver-attack-1"

// approverAttackGate is a gate on a fresh memory store whose "mail" tool
// goes to the call's user, "refund" to the finance group, "wire" to two of
// the finance group, and "audit" to another group.
func approverAttackGate(t *testing.T, who *actingApprover) *gate.Gate {
	t.Helper()
	cat, err := policy.NewCatalog(approverAttackVersion,
		policy.Tool{Name: "mail", Title: "Mail", Class: card.ClassExternal},
		policy.Tool{Name: "refund", Title: "Refund", Class: card.ClassIrreversible, Approvers: "finance"},
		policy.Tool{Name: "wire", Title: "Wire", Class: card.ClassIrreversible, Approvers: "finance", Quorum: 2},
		policy.Tool{Name: "audit", Title: "Audit", Class: card.ClassExternal, Approvers: "odd"})
	require.NoError(t, err)
	g, err := gate.New(memory.New(nil), cat, who, gate.WithDwell(0), gate.WithoutFloodControlUnsafe(),
		gate.WithApproverGroup("finance", "user:dana", "user:erin", "user:finn"),
		gate.WithApproverGroup("odd", "user:finn", "user:mallory"))
	require.NoError(t, err)
	return g
}

// mayDecide is the rule under test, written out: a well-formed person's
// id, among the ticket's deciders (its user, or its group's members), and
// none of the requester's agent or delegations.
func mayDecide(c claimant, tool string, p canon.Principal) bool {
	if !c.person || c.id == p.Agent || slices.Contains(p.Delegations, c.id) {
		return false
	}
	switch tool {
	case "mail":
		return c.id == p.User
	case "audit":
		return c.id == "user:finn" || c.id == "user:mallory"
	}
	return slices.Contains([]string{"user:dana", "user:erin", "user:finn"}, c.id)
}

// TestOnlyDecidersDecide: for generated calls (each tool, users, agents
// and delegations drawn from the claimants' people) and answers in every
// claimant's name, Approve, Deny and Revoke succeed exactly when the
// claimant may decide the ticket; a quorum is never met by one claimant
// twice; nothing else changes the ticket.
func TestOnlyDecidersDecide(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	who := &actingApprover{}
	g := approverAttackGate(t, who)
	users := []string{"user:dana", "user:erin", "user:finn", "user:mallory"}
	delegations := [][]string{nil, {"user:erin"}, {"user:finn", "agent:helper"}, {"user:dana"}}
	checked := 0
	for i := range 60 {
		tool := []string{"mail", "refund", "wire", "audit"}[i%4]
		p := canon.Principal{User: users[rng.IntN(len(users))], Agent: "agent:reports",
			Delegations: delegations[rng.IntN(len(delegations))]}
		propose := func(n int) stepup.Ticket {
			tk, err := g.Propose(ctx, stepup.Call{Tool: tool, Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
				Session: fmt.Sprintf("s-%d-%d", i, n), Step: fmt.Sprint(n), Principal: p})
			require.NoError(t, err)
			return tk
		}
		tk := propose(0)
		if tk.Status != stepup.StatusPending {
			continue // nobody may decide it (the requester is the whole group): denied at propose
		}
		for j, c := range claimants {
			// Approve: a fresh pending ticket for each claimant.
			tk := propose(1 + 3*j)
			who.as(c.id)
			got, err := g.Desk().Approve(ctx, tk.ID, []byte(`yes`))
			want := mayDecide(c, tool, p)
			if want {
				require.NoError(t, err, "%s on %s for %+v", c.id, tool, p)
			} else {
				assert.Error(t, err, "%q approved %s for %+v", c.id, tool, p)
			}
			if err == nil && tool == "wire" {
				assert.Equal(t, stepup.StatusPending, got.Status, "one vote of two")
				_, err = g.Desk().Approve(ctx, tk.ID, []byte(`yes`))
				assert.ErrorIs(t, err, stepup.ErrNotPermitted, "%q twice met a quorum of two", c.id)
			}
			// Deny.
			tk = propose(2 + 3*j)
			_, err = g.Desk().Deny(ctx, tk.ID, []byte(`no`), "no")
			assert.Equal(t, want, err == nil, "deny by %q of %s for %+v: %v", c.id, tool, p, err)
			// Revoke an approval a decider made.
			if tool == "wire" {
				continue
			}
			tk = propose(3 + 3*j)
			who.as(firstDecider(tool, p))
			_, err = g.Desk().Approve(ctx, tk.ID, []byte(`yes`))
			require.NoError(t, err)
			who.as(c.id)
			_, err = g.Desk().Revoke(ctx, tk.ID, []byte(`no`), "revoke")
			assert.Equal(t, want, err == nil, "revoke by %q of %s for %+v: %v", c.id, tool, p, err)
			checked++
		}
	}
	assert.Greater(t, checked, 200)
}

// firstDecider is someone mayDecide admits for tool and p.
func firstDecider(tool string, p canon.Principal) string {
	for _, c := range claimants {
		if mayDecide(c, tool, p) {
			return c.id
		}
	}
	return ""
}

// TestMayDecideOracleBites: the oracle above is not vacuous: a naive rule
// (any answer naming a group member or the call's user, spelled in any
// case, with surrounding space trimmed) admits claimants it refuses.
func TestMayDecideOracleBites(t *testing.T) {
	naive := func(c claimant, tool string, p canon.Principal) bool {
		id := strings.ToLower(strings.TrimSpace(c.id))
		return id == p.User || slices.Contains([]string{"user:dana", "user:erin", "user:finn"}, id)
	}
	p := canon.Principal{User: "user:dana", Agent: "agent:reports", Delegations: []string{"user:erin"}}
	differ := 0
	for _, c := range claimants {
		if naive(c, "refund", p) != mayDecide(c, "refund", p) {
			differ++
		}
	}
	assert.Greater(t, differ, 5)
}

// TestGroupsHoldOnlyPeople: a group member that is not a well-formed
// person's id (an agent, a reserved kind, another case or spelling of a
// person) is refused when the gate is built, not silently kept.
func TestGroupsHoldOnlyPeople(t *testing.T) {
	cat, err := policy.NewCatalog("groups-1", policy.Tool{Name: "mail", Title: "Mail", Class: card.ClassExternal})
	require.NoError(t, err)
	for _, c := range claimants {
		_, err := gate.New(memory.New(nil), cat, &actingApprover{}, gate.WithApproverGroup("g", "user:finn", c.id))
		if c.person {
			assert.NoError(t, err, "%q", c.id)
		} else {
			assert.Error(t, err, "%q kept as a group member", c.id)
		}
	}
}
