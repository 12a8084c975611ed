package gate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
)

// notRunRows returns the "not_run" rows of ticket id.
func notRunRows(t *testing.T, w *world, id stepup.TicketID) []audit.Record {
	t.Helper()
	rows, err := w.Store.AuditRange(context.Background(), time.Time{}, stepupFar)
	require.NoError(t, err)
	var out []audit.Record
	for _, r := range rows {
		if r.TicketID == string(id) && r.Decision == audit.DecisionNotRun {
			out = append(out, r)
		}
	}
	return out
}

// TestRefusedExecuteIsNotRunNotFailed: an Execute refused before anything
// ran is a "not_run" row, and its ticket's status is not "failed": that
// word is kept for a run whose tool failed.
func TestRefusedExecuteIsNotRunNotFailed(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, tk.ID) // pending: nothing spent
	require.ErrorIs(t, err, stepup.ErrNotApproved)
	rows := notRunRows(t, w, tk.ID)
	require.Len(t, rows, 1)
	assert.Equal(t, "ticket not approved", rows[0].Reason)
	got, err := w.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status)
	assert.Zero(t, w.Exec.Count())
}

// TestRepeatedRefusedExecutesAreRateLimitedInTheChain: an agent that
// executes a spent ticket 1,000 times, one after another and all at once,
// adds one row, not 1,000: identical refusals of one ticket within the
// window are counted, not written. Once the window has passed, the next
// refusal is written again and says how many it stands for. Other
// tickets, and other kinds of refusal of the same ticket, have rows of
// their own.
func TestRepeatedRefusedExecutesAreRateLimitedInTheChain(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = w.Approve(tk.ID)
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)
	head := func() int64 {
		h, err := w.Store.AuditHead(ctx)
		require.NoError(t, err)
		return h.Seq
	}
	before := head()

	for range 500 {
		_, err := w.Gate.Execute(ctx, tk.ID)
		require.ErrorIs(t, err, stepup.ErrConsumed)
	}
	var wg sync.WaitGroup
	for range 500 {
		wg.Go(func() {
			_, err := w.Gate.Execute(ctx, tk.ID)
			assert.ErrorIs(t, err, stepup.ErrConsumed)
		})
	}
	wg.Wait()
	assert.Equal(t, before+1, head(), "1,000 refusals of one spent ticket add one row")
	rows := notRunRows(t, w, tk.ID)
	require.Len(t, rows, 1)
	assert.Equal(t, "approval already used", rows[0].Reason)

	// A refusal of another ticket is written at once.
	other, err := w.Gate.Propose(ctx, sendEmail("audit@example.com"))
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, other.ID)
	require.ErrorIs(t, err, stepup.ErrNotApproved)
	assert.Len(t, notRunRows(t, w, other.ID), 1)

	// After the window, the next refusal is written, with the count.
	w.Clock.Advance(gate.NotRunWindow)
	_, err = w.Gate.Execute(ctx, tk.ID)
	require.ErrorIs(t, err, stepup.ErrConsumed)
	rows = notRunRows(t, w, tk.ID)
	require.Len(t, rows, 2)
	assert.Equal(t, "approval already used (and 999 identical refusals since the last row)", rows[1].Reason)
	require.NoError(t, audit.VerifyChain(allRows(t, w), [32]byte{}))
}

func allRows(t *testing.T, w *world) []audit.Record {
	t.Helper()
	rows, err := w.Store.AuditRange(context.Background(), time.Time{}, stepupFar)
	require.NoError(t, err)
	return rows
}
