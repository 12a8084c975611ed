package gate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// signedAnswers proposes n mails on r's gate g and has a sign an answer
// for each, in order: their signature counters are consecutive, as two
// (or n) open tabs of one approver would make them.
func signedAnswers(t *testing.T, g *gate.Gate, a *stepuptest.Authenticator, n int) ([]stepup.TicketID, [][]byte) {
	t.Helper()
	ctx := context.Background()
	ids := make([]stepup.TicketID, n)
	answers := make([][]byte, n)
	for i := range n {
		tk, err := g.Propose(ctx, rigCall("send_email", fmt.Sprintf(`{"to":"finance@example.com","subject":"n%d"}`, i),
			"user:dana", fmt.Sprintf("s-counter-%d", i), "step"))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		p, err := g.Desk().Prompt(ctx, tk.ID)
		require.NoError(t, err)
		require.NoError(t, g.Desk().Show(ctx, tk.ID))
		ids[i] = tk.ID
		answers[i], err = a.Assert(p.Options)
		require.NoError(t, err)
	}
	return ids, answers
}

// counterRefusal checks that err, the refusal of an answer whose
// counter did not advance, is the counter error and only that: never a
// store failure.
func counterRefusal(t *testing.T, err error, what string) {
	t.Helper()
	assert.ErrorIs(t, err, passkey.ErrCounter, what)
	assert.ErrorIs(t, err, store.ErrCounter, what)
	assert.NotErrorIs(t, err, stepup.ErrStore, "%s: %v", what, err)
}

// TestCounterRegressionsAreTheCounterErrorOnEveryBackend: answers signed
// by one authenticator for many tickets (counters c, c+1, ...), submitted
// at once, are approved or refused; every refusal is the counter error
// (the clone signal), never a store failure, on every store. Submitted
// newest first, one after another, every older one is refused so.
func TestCounterRegressionsAreTheCounterErrorOnEveryBackend(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			if b.skip != "" {
				t.Skip(b.skip)
			}
			ctx := context.Background()
			r := b.open(t)
			g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), gate.WithoutFloodControlUnsafe())
			dana := r.person(t, "user:dana")

			t.Run("at once", func(t *testing.T) {
				ids, answers := signedAnswers(t, g, dana, 40)
				errs := make([]error, len(ids))
				var wg sync.WaitGroup
				for i := range ids {
					wg.Go(func() { _, errs[i] = g.Desk().Approve(ctx, ids[i], answers[i]) })
				}
				wg.Wait()
				approved := 0
				for i, err := range errs {
					if err == nil {
						approved++
						continue
					}
					counterRefusal(t, err, fmt.Sprintf("answer %d", i))
				}
				assert.Positive(t, approved, "the newest answer always lands")
				t.Logf("%s: %d of %d approved, %d refused as the counter", b.name, approved, len(errs), len(errs)-approved)
			})
			t.Run("newest first", func(t *testing.T) {
				ids, answers := signedAnswers(t, g, dana, 5)
				_, err := g.Desk().Approve(ctx, ids[4], answers[4])
				require.NoError(t, err)
				for i := 3; i >= 0; i-- {
					_, err := g.Desk().Approve(ctx, ids[i], answers[i])
					require.Error(t, err)
					counterRefusal(t, err, fmt.Sprintf("answer %d after answer 4", i))
				}
			})
		})
	}
}
