package gate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestReplayedAnswerDoesNotFillTheChain: nobody can fill the chain
// without a key. One answer Dana's passkey signed, once, for a ticket she
// approved, is in that ticket's receipt: whoever holds a copy can post it
// again to any of her pending tickets, as often as they like. Its
// signature is hers, so a desk that recorded every refused answer her key
// signed left a "refused" row naming her on a ticket she never answered
// for each post; at most one row may come of it.
func TestReplayedAnswerDoesNotFillTheChain(t *testing.T) {
	ctx := context.Background()
	w := stepuptest.NewWorld(t)
	rows := func() []audit.Record {
		r, err := w.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
		require.NoError(t, err)
		return r
	}
	desk := w.Gate.Desk()
	a := stepuptest.SendEmail("finance@example.com")
	a.Step, a.Session = "signed once", "s-a"
	ta, err := w.Gate.Propose(ctx, a)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, ta.Status, ta.Reason)
	p, err := desk.Prompt(ctx, ta.ID)
	require.NoError(t, err)
	require.NoError(t, desk.Show(ctx, ta.ID))
	answer, err := w.Authenticator.Assert(p.Options)
	require.NoError(t, err)
	done, err := desk.Approve(ctx, ta.ID, answer)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, done.Status)

	// One signed answer may leave one row (the desk's own design: Dana's
	// answer for another ticket is hers); the property is that copies of it
	// leave no more.
	const posts = 40
	for _, tickets := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d pending tickets", tickets), func(t *testing.T) {
			var pending []stepup.TicketID
			for i := range tickets {
				b := stepuptest.SendEmail("finance@example.com")
				b.Step, b.Session = fmt.Sprintf("replay %d/%d", i, tickets), fmt.Sprintf("s-%d-%d", i, tickets)
				tb, err := w.Gate.Propose(ctx, b)
				require.NoError(t, err)
				require.Equal(t, stepup.StatusPending, tb.Status, tb.Reason)
				pending = append(pending, tb.ID)
			}
			before := len(rows())
			for i := range posts {
				_, err := desk.Approve(ctx, pending[i%tickets], answer)
				require.Error(t, err, "a replayed answer approved another ticket")
			}
			refused := 0
			for _, r := range rows()[before:] {
				if r.Decision == audit.DecisionRefused {
					assert.Equal(t, stepuptest.Approver, r.Approver)
					refused++
				}
			}
			assert.LessOrEqual(t, refused, 1, "%d posts of one answer Dana signed once left %d refused rows naming her",
				posts, refused)
		})
	}
}
