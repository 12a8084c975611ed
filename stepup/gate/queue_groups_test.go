package gate_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// TestQueueReadsEveryGroup: an approver in as many groups as one store
// read takes, one more, and several reads' worth, is queued the tickets
// of every one of them, soonest expiry first, and no more than the
// limit.
func TestQueueReadsEveryGroup(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, store.MaxQueueGroups - 1, store.MaxQueueGroups, store.MaxQueueGroups + 1, 2*store.MaxQueueGroups + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			// Tools route to the first, a middle and the last group.
			picks := []int{0, n / 2, n - 1}
			var tools []policy.Tool
			for i, g := range picks {
				tools = append(tools, policy.Tool{Name: fmt.Sprintf("refund_%d", i), Class: card.ClassIrreversible,
					Approvers: fmt.Sprintf("g%03d", g)})
			}
			cat, err := policy.NewCatalog("v1", tools...)
			require.NoError(t, err)
			var opts []gate.Option
			for i := range n {
				opts = append(opts, gate.WithApproverGroup(fmt.Sprintf("g%03d", i), "user:erin"))
			}
			h := stepuptest.NewGate(t, cat, opts...)
			h.Enroll(t, "user:erin")
			var want []stepup.TicketID
			for i := len(tools) - 1; i >= 0; i-- { // the last group's ticket expires first
				tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: tools[i].Name, Args: []byte(`{"order":"A-17"}`),
					Session: fmt.Sprintf("s%d", i), Principal: agentFor("user:carol")})
				require.NoError(t, err)
				require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
				if !slices.Contains(want, tk.ID) {
					want = append(want, tk.ID)
				}
				h.Clock.Advance(time.Second)
			}
			q, err := h.Gate.Desk().Queue(ctx, "user:erin", 0)
			require.NoError(t, err)
			var got []stepup.TicketID
			for _, e := range q {
				got = append(got, e.Ticket.ID)
			}
			assert.Equal(t, want, got)
			q, err = h.Gate.Desk().Queue(ctx, "user:erin", 1)
			require.NoError(t, err)
			require.Len(t, q, 1)
			assert.Equal(t, want[0], q[0].Ticket.ID)
		})
	}
}
