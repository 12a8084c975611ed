package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// lapseCatalog routes a wire to two people of finance.
func lapseCatalog(t *testing.T) *policy.Catalog {
	t.Helper()
	cat, err := policy.NewCatalog("votes-lapse-1", policy.Tool{Name: "wire", Title: "Wire",
		Class: card.ClassIrreversible, Approvers: "finance", Quorum: 2})
	require.NoError(t, err)
	return cat
}

// lapseKey is the gate key the replicas of these tests share, as a
// deployment's replicas do: each verifies the votes the others sealed.
var lapseKey = []byte("votes lapse: the key every replica of the test shares")

// countDecisions counts the audit rows of ticket id with decision d.
func countDecisions(t *testing.T, s store.Store, id stepup.TicketID, d string) int {
	t.Helper()
	recs, err := s.AuditSeq(context.Background(), 0, 1<<62)
	require.NoError(t, err)
	n := 0
	for _, r := range recs {
		if r.TicketID == string(id) && r.Decision == d {
			n++
		}
	}
	return n
}

// TestApprovedQuorumLapses: a wire approved by erin and finn, after which
// finn leaves finance, reads pending with the reason instead of approved,
// while the stored row (what a reader that trusts the store sees) still
// says approved and Execute refuses it. One more member's approval makes
// the quorum again, and the wire runs once.
func TestApprovedQuorumLapses(t *testing.T) {
	ctx := context.Background()
	cat := lapseCatalog(t)
	exec := &stepuptest.Recorder{}
	h := stepuptest.NewGate(t, cat, gate.WithKey(lapseKey), gate.WithExecutor("wire", exec),
		gate.WithApproverGroup("finance", "user:erin", "user:finn", "user:gus"))
	keys := map[string]*stepuptest.Authenticator{}
	for _, p := range []string{"user:erin", "user:finn", "user:gus"} {
		keys[p] = h.Enroll(t, p)
	}
	tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "wire", Args: json.RawMessage(`{"amount":9000}`),
		Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:treasury"}})
	require.NoError(t, err)
	for _, p := range []string{"user:erin", "user:finn"} {
		_, err = stepuptest.Approve(ctx, h.Gate.Desk(), keys[p], tk.ID)
		require.NoError(t, err, p)
	}
	// finn leaves finance: the gate restarts with the new group.
	g, err := gate.New(h.Store, cat, stepuptest.Passkeys(h.Store), gate.WithLocalClock(h.Clock.Now),
		gate.WithDwell(0), gate.WithKey(lapseKey), gate.WithExecutor("wire", exec), gate.WithApproverGroup("finance", "user:erin", "user:gus"))
	require.NoError(t, err)

	row, err := h.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	require.Equal(t, store.Approved, row.State, "the naive reading: the stored row says approved")
	_, err = g.Execute(ctx, tk.ID)
	require.Error(t, err, "yet Execute refuses it")
	assert.Zero(t, exec.Count())

	got, err := g.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status, "the gate says what Execute does")
	assert.Contains(t, got.Reason, "user:finn")
	assert.Contains(t, got.Reason, "no longer in finance")
	assert.Contains(t, got.Reason, "1 of the 2")
	row, err = h.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	assert.Equal(t, store.Pending, row.State)
	require.Len(t, row.Votes, 1, "erin's vote still stands")
	assert.Equal(t, "user:erin", row.Votes[0].Approver)
	assert.Equal(t, 1, countDecisions(t, h.Store, tk.ID, audit.DecisionReopened), "one row says why")
	for range 3 {
		again, err := g.Ticket(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, again.Status)
	}
	assert.Equal(t, 1, countDecisions(t, h.Store, tk.ID, audit.DecisionReopened), "reopened once, whoever reads")

	_, err = stepuptest.Approve(ctx, g.Desk(), keys["user:erin"], tk.ID)
	require.Error(t, err, "erin's standing vote counts once")
	done, err := stepuptest.Approve(ctx, g.Desk(), keys["user:gus"], tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, done.Status)
	_, err = g.Execute(ctx, tk.ID)
	require.NoError(t, err)
	_, err = g.Execute(ctx, tk.ID)
	require.Error(t, err)
	assert.Equal(t, 1, exec.Count())
}

// TestApprovedReadsRunnableAcrossGates: two gates share one store; in
// random orders, each restarts with another finance group (a rolling
// change), passkeys are revoked and replaced, people vote on either gate
// and both gates read the ticket, sometimes at the same moment. At every
// read, a gate that says approved runs the ticket when asked to; a gate
// that says anything else refuses to run it; the wire runs at most once,
// and each approval is reopened at most once.
func TestApprovedReadsRunnableAcrossGates(t *testing.T) {
	ctx := context.Background()
	people := []string{"user:erin", "user:finn", "user:gus", "user:hal"}
	cat := lapseCatalog(t)
	ran, lapsed := 0, 0
	for seed := range uint64(80) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 230))
			exec := &stepuptest.Recorder{}
			members := func() []string {
				var in []string
				for _, p := range people {
					if rng.IntN(4) > 0 {
						in = append(in, p)
					}
				}
				for _, p := range people {
					if len(in) < 2 && !slices.Contains(in, p) {
						in = append(in, p)
					}
				}
				return in
			}
			h := stepuptest.NewGate(t, cat, gate.WithKey(lapseKey), gate.WithExecutor("wire", exec), gate.WithApproverGroup("finance", people...))
			keys := map[string]*stepuptest.Authenticator{}
			for _, p := range people {
				keys[p] = h.Enroll(t, p)
			}
			newGate := func() *gate.Gate {
				g, err := gate.New(h.Store, cat, stepuptest.Passkeys(h.Store), gate.WithLocalClock(h.Clock.Now),
					gate.WithDwell(0), gate.WithKey(lapseKey), gate.WithExecutor("wire", exec), gate.WithApproverGroup("finance", members()...))
				require.NoError(t, err)
				return g
			}
			gates := [2]*gate.Gate{newGate(), newGate()}
			tk, err := gates[0].Propose(ctx, stepup.Call{Tool: "wire", Args: json.RawMessage(`{"amount":9000}`),
				Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:treasury"}})
			require.NoError(t, err)
			var log []string
			executed := false
			for step := 0; step < 30; step++ {
				h.Clock.Advance(time.Second)
				i := rng.IntN(2)
				switch op := rng.IntN(10); {
				case op == 0:
					gates[i] = newGate()
					log = append(log, fmt.Sprintf("gate %d restarts", i))
				case op == 1:
					who := people[rng.IntN(len(people))]
					ids := keys[who].CredentialIDs()
					if err := h.Enrollment.RevokeCredential(ctx, ids[len(ids)-1], "user:ops", "lost"); err == nil {
						log = append(log, "revoke "+who)
					}
				case op == 2:
					who := people[rng.IntN(len(people))]
					keys[who] = h.Enroll(t, who)
					log = append(log, "new passkey "+who)
				case op < 6:
					who := people[rng.IntN(len(people))]
					ids := keys[who].CredentialIDs()
					_, err := stepuptest.Approve(ctx, gates[i].Desk(), keys[who], tk.ID, stepuptest.WithCredential(ids[len(ids)-1]))
					log = append(log, fmt.Sprintf("%s votes on gate %d: %v", who, i, err))
				case op < 8:
					var wg sync.WaitGroup
					var reads [2]stepup.Ticket
					var errs [2]error
					for j := range gates {
						wg.Go(func() { reads[j], errs[j] = gates[j].Ticket(ctx, tk.ID) })
					}
					wg.Wait()
					require.NoError(t, errs[0])
					require.NoError(t, errs[1])
					log = append(log, fmt.Sprintf("both read %s, %s", reads[0].Status, reads[1].Status))
				default:
					got, err := gates[i].Ticket(ctx, tk.ID)
					require.NoError(t, err)
					_, xerr := gates[i].Execute(ctx, tk.ID)
					log = append(log, fmt.Sprintf("gate %d reads %s, executes: %v", i, got.Status, xerr))
					if got.Status == stepup.StatusApproved {
						require.NoError(t, xerr, "gate %d read approved but does not run it: %v", i, log)
						executed = true
						ran++
					} else {
						require.Error(t, xerr, "gate %d read %s but ran it: %v", i, got.Status, log)
					}
				}
				assert.LessOrEqual(t, exec.Count(), 1, "%v", log)
				if executed {
					break
				}
			}
			approvals := countDecisions(t, h.Store, tk.ID, audit.DecisionApproved)
			reopened := countDecisions(t, h.Store, tk.ID, audit.DecisionReopened)
			assert.LessOrEqual(t, reopened, approvals, "an approval is reopened at most once: %v", log)
			lapsed += reopened
		})
	}
	t.Logf("ran in %d cases; %d approvals went back to pending", ran, lapsed)
	assert.Positive(t, ran)
	assert.Positive(t, lapsed)
}
