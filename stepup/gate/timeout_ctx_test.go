package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// cancelAfterTimeout ends the caller's context as soon as a ticket has
// been cancelled in the store: a runtime whose Wait deadline falls at
// that instant.
type cancelAfterTimeout struct {
	store.Store
	cancel context.CancelFunc
	to     store.State // the resolution after which the context ends; cancelled when empty
}

func (s cancelAfterTimeout) Resolve(ctx context.Context, id string, r store.Resolution, n store.Note) (store.Approval, error) {
	a, err := s.Store.Resolve(ctx, id, r, n)
	if err == nil && (r.To == s.to || s.to == "" && r.To == store.Cancelled) {
		s.cancel()
	}
	return a, err
}

// TestTimeoutAlternativeOutlivesTheWaitersContext: once a timed-out
// ticket is cancelled, with an audit row saying the safe alternative was
// proposed instead, the alternative is proposed. It was proposed with the
// waiter's context, so a waiter whose context ended at that moment left
// the ticket cancelled, the audit log naming an alternative that never
// existed, and nothing for the runtime to run; no later sweep retries it.
func TestTimeoutAlternativeOutlivesTheWaitersContext(t *testing.T) {
	clock := stepuptest.NewClock(stepuptest.Start())
	mem := stepuptest.Memory(clock)
	t.Cleanup(func() { _ = mem.Close() })
	waitCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := gate.New(cancelAfterTimeout{Store: mem, cancel: cancel}, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem))
	require.NoError(t, err)

	ctx := context.Background()
	tk, err := g.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	clock.Advance(15 * time.Minute)
	_, _ = g.Wait(waitCtx, tk.ID) // its context ends mid-timeout

	got, err := g.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusCancelled, got.Status)
	require.NotEmpty(t, got.Next, "the audit log says an alternative was proposed")
	alt, err := g.Ticket(ctx, got.Next)
	require.NoError(t, err)
	assert.Equal(t, "write_draft", alt.Tool)
	assert.Equal(t, stepup.StatusAllowed, alt.Status)
}

// TestGrantIssuedOnceApproved: once the user's passkey approved a grant
// ticket, the grant is issued. It was consumed with the approver's request
// context, so a request ending right after the approval was stored left
// the ticket approved and the grant never issued, with no way to approve
// it again or recover it.
func TestGrantIssuedOnceApproved(t *testing.T) {
	clock := stepuptest.NewClock(stepuptest.Start())
	mem := stepuptest.Memory(clock)
	t.Cleanup(func() { _ = mem.Close() })
	reqCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := gate.New(cancelAfterTimeout{Store: mem, cancel: cancel, to: store.Approved},
		stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithDwell(0))
	require.NoError(t, err)
	ctx := context.Background()
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(mem), stepuptest.Approver)
	require.NoError(t, err)

	tk, err := g.Desk().Grant(ctx, stepuptest.Approver, gate.GrantSpec{
		Grant: grant.Exact(canon.Sum([]byte("an effect"))), Uses: 1, ExpiresAt: clock.Now().Add(time.Hour)})
	require.NoError(t, err)
	_, _ = stepuptest.Approve(reqCtx, g.Desk(), dana, tk.ID) // the request ends once it is approved

	got, err := g.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusExecuted, got.Status, "an approved grant was never issued")
	_, err = mem.GetGrant(ctx, string(tk.ID))
	assert.NoError(t, err)
}
