package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestVotesThatStand: between the votes of a rule-of-two wire, the
// finance group changes (the gate restarts with other members on the
// same store) and passkeys are revoked, in random orders. Whenever the
// ticket reads approved, Execute runs it; a vote whose approver left the
// group or lost their passkey is listed as no longer counting, and a
// quorum it would have completed leaves the ticket pending, waiting for
// another approval.
func TestVotesThatStand(t *testing.T) {
	ctx := context.Background()
	people := []string{"user:erin", "user:finn", "user:gus", "user:hal"}
	cat, err := policy.NewCatalog("votes-stand-1", policy.Tool{Name: "wire", Title: "Wire",
		Class: card.ClassIrreversible, Approvers: "finance", Quorum: 2})
	require.NoError(t, err)
	approvedCases, droppedCases := 0, 0
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			exec := &stepuptest.Recorder{}
			members := func() []string {
				var in []string
				for _, p := range people {
					if rng.IntN(3) > 0 {
						in = append(in, p)
					}
				}
				for _, p := range people { // a group smaller than the quorum refuses every wire
					if len(in) < 2 && !slices.Contains(in, p) {
						in = append(in, p)
					}
				}
				return in
			}
			group := members()
			h := stepuptest.NewGate(t, cat, gate.WithExecutor("wire", exec), gate.WithApproverGroup("finance", group...))
			keys := map[string]*stepuptest.Authenticator{}
			for _, p := range people {
				keys[p] = h.Enroll(t, p)
			}
			restart := func() *gate.Gate {
				group = members()
				g, err := gate.New(h.Store, cat, stepuptest.Passkeys(h.Store), gate.WithLocalClock(h.Clock.Now),
					gate.WithDwell(0), gate.WithExecutor("wire", exec), gate.WithApproverGroup("finance", group...))
				require.NoError(t, err)
				return g
			}
			g := h.Gate
			tk, err := g.Propose(ctx, stepup.Call{Tool: "wire", Args: json.RawMessage(`{"amount":9000}`),
				Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:treasury"}})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
			revoked := map[string]bool{}
			var log []string
			for step := 0; step < 12; step++ {
				h.Clock.Advance(time.Second)
				switch op := rng.IntN(4); {
				case op == 0:
					g = restart()
					log = append(log, fmt.Sprintf("finance=%v", group))
				case op == 1:
					who := people[rng.IntN(len(people))]
					if !revoked[who] {
						require.NoError(t, h.Enrollment.RevokeCredential(ctx, keys[who].CredentialIDs()[0], "user:ops", "lost"))
						revoked[who] = true
						log = append(log, "revoke "+who)
					}
				default:
					who := people[rng.IntN(len(people))]
					_, err := stepuptest.Approve(ctx, g.Desk(), keys[who], tk.ID, stepuptest.WithCredential(keys[who].CredentialIDs()[0]))
					log = append(log, fmt.Sprintf("%s votes: %v", who, err))
				}
				got, err := g.Ticket(ctx, tk.ID)
				require.NoError(t, err, "%v", log)
				p, err := g.Desk().Progress(ctx, tk.ID)
				require.NoError(t, err)
				if len(p.Dropped) > 0 {
					droppedCases++
				}
				for _, s := range p.Signed {
					assert.True(t, slices.Contains(group, s.Approver) && !revoked[s.Approver],
						"%s counts although out of the group or revoked: %v", s.Approver, log)
				}
				if got.Status != stepup.StatusApproved {
					assert.Less(t, len(p.Signed), 2, "two votes count but the ticket is %s: %v", got.Status, log)
					continue
				}
				approvedCases++
				_, err = g.Execute(ctx, tk.ID)
				require.NoError(t, err, "the ticket reads approved but does not run: %v", log)
				assert.Equal(t, 1, exec.Count())
				return
			}
		})
	}
	t.Logf("approved and ran in %d cases; a vote no longer counted in %d readings", approvedCases, droppedCases)
	assert.Positive(t, approvedCases)
	assert.Positive(t, droppedCases)
}
