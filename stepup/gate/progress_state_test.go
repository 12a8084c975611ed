package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestProgressSignedOnlyWhileTheApprovalStands: Progress lists an
// approval, and words one, only for a ticket that is approved, running or
// run; a denial, an expiry, a cancellation, a revocation and a practice
// request (stored denied, approved or not) show none.
func TestProgressSignedOnlyWhileTheApprovalStands(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		reach  func(t *testing.T, w *world, id stepup.TicketID)
		signed bool
	}{
		{"pending", func(*testing.T, *world, stepup.TicketID) {}, false},
		{"approved", func(t *testing.T, w *world, id stepup.TicketID) { _, err := w.Approve(id); require.NoError(t, err) }, true},
		{"executed", func(t *testing.T, w *world, id stepup.TicketID) {
			_, err := w.Approve(id)
			require.NoError(t, err)
			_, err = w.Gate.Execute(ctx, id)
			require.NoError(t, err)
		}, true},
		{"denied", func(t *testing.T, w *world, id stepup.TicketID) { _, err := w.Deny(id, "no"); require.NoError(t, err) }, false},
		{"cancelled", func(t *testing.T, w *world, id stepup.TicketID) {
			_, err := w.Gate.Cancel(ctx, id, "changed my mind")
			require.NoError(t, err)
		}, false},
		{"expired", func(t *testing.T, w *world, id stepup.TicketID) {
			w.Clock.Advance(2 * time.Hour)
			_, err := w.Gate.Ticket(ctx, id)
			require.NoError(t, err)
		}, false},
		{"revoked", func(t *testing.T, w *world, id stepup.TicketID) {
			_, err := w.Approve(id)
			require.NoError(t, err)
			_, err = w.Gate.Admin().RevokeTicket(ctx, id, "user:ops", "no")
			require.NoError(t, err)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			tc.reach(t, w, tk.ID)
			p, err := w.Gate.Desk().Progress(ctx, tk.ID)
			require.NoError(t, err)
			if tc.signed {
				require.Len(t, p.Signed, 1)
				assert.Equal(t, stepuptest.Approver, p.Signed[0].Approver)
				assert.Contains(t, p.Sentence(), "approved by "+stepuptest.Approver)
				return
			}
			assert.Empty(t, p.Signed)
			assert.NotContains(t, p.Sentence(), "approved by")
		})
	}
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "practice approved", false: "practice denied"}[approve], func(t *testing.T) {
			w := newWorld(t, gate.WithPractice("", 1))
			ids := practiceIDs(t, w, proposeEmails(t, w, 1))
			require.Len(t, ids, 1)
			if approve {
				_, err := w.Approve(ids[0])
				require.NoError(t, err)
			} else {
				_, err := w.Deny(ids[0], "a look-alike")
				require.NoError(t, err)
			}
			p, err := w.Gate.Desk().Progress(ctx, ids[0])
			require.NoError(t, err)
			assert.Empty(t, p.Signed)
			assert.NotContains(t, p.Sentence(), "approved by")
		})
	}
}
