package exectoken_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// flakyChecker is a gate whose store fails once, on the next call of
// either check: as the gate words it, a retryable store error.
type flakyChecker struct {
	exectoken.Checker
	fail atomic.Bool
}

func (c *flakyChecker) failed() error {
	if c.fail.CompareAndSwap(true, false) {
		return fmt.Errorf("evidence: %w: connection reset by peer", stepup.ErrStore)
	}
	return nil
}

func (c *flakyChecker) Runnable(ctx context.Context, id stepup.TicketID) (plug.Runnable, error) {
	if err := c.failed(); err != nil {
		return plug.Runnable{}, err
	}
	return c.Checker.Runnable(ctx, id)
}

func (c *flakyChecker) Holds(ctx context.Context, id stepup.TicketID) error {
	if err := c.failed(); err != nil {
		return err
	}
	return c.Checker.Holds(ctx, id)
}

// TestVerifierStoreFailureIsNoRefusal: a store failure while the
// executor checks a ticket is a retryable store error, not a refusal: no
// audit row, nothing spent, and the same token verifies on the next try.
// During Recover it abandons nothing: the run is handed back later, with
// its key.
func TestVerifierStoreFailureIsNoRefusal(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	check := &flakyChecker{Checker: w.Gate}
	v, err := exectoken.NewVerifier(w.issuer.PublicKey(), tokenIssuerName, "send_email", w.Store, check,
		exectoken.WithVerifierResolver(canon.FileResolver{Root: w.Dir}), exectoken.WithVerifierLocalClock(w.Clock.Now))
	require.NoError(t, err)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	rows := func() int {
		all, err := w.Store.AuditRange(ctx, time.Time{}, w.Clock.Now().Add(time.Hour))
		require.NoError(t, err)
		return len(all)
	}
	before := rows()

	check.fail.Store(true)
	_, err = v.Verify(ctx, tok, effectOf(call))
	require.ErrorIs(t, err, stepup.ErrStore)
	assert.NotErrorIs(t, err, stepup.ErrBadAssertion)
	assert.Equal(t, before, rows(), "a store failure writes no refusal")
	got, err := w.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status, "nothing spent")

	claims, err := v.Verify(ctx, tok, effectOf(call))
	require.NoError(t, err, "the retry verifies")

	// Interrupted: Recover meets the same failure, and abandons nothing.
	w.Clock.Advance(exectoken.DefaultExecutorLease)
	_, err = v.Recover(ctx) // starts watching the expired lease
	require.NoError(t, err)
	w.Clock.Advance(exectoken.DefaultExecutorLease)
	check.fail.Store(true)
	back, err := v.Recover(ctx)
	require.ErrorIs(t, err, stepup.ErrStore)
	assert.Empty(t, back)
	a, err := w.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	assert.Equal(t, store.Executing, a.State, "not abandoned")
	back, err = v.Recover(ctx)
	require.NoError(t, err)
	require.Len(t, back, 1, "handed back on the next Recover")
	assert.Equal(t, claims.IdempotencyKey, back[0].Claims.IdempotencyKey)

	all, err := w.Store.AuditRange(ctx, time.Time{}, w.Clock.Now().Add(time.Hour))
	require.NoError(t, err)
	for _, r := range all {
		assert.NotEqual(t, receipt.DecisionAbandoned, r.Decision, r.Reason)
		assert.NotEqual(t, receipt.DecisionNotRun, r.Decision, r.Reason)
	}
}
