package gate_test

import (
	"context"
	"sync/atomic"
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

// slowResolver resolves every file to the same content; once armed, each
// resolution takes d of the clock, as a slow disk or a stalled remote
// store would.
type slowResolver struct {
	clock *stepuptest.Clock
	d     time.Duration
	armed atomic.Bool
}

func (r *slowResolver) Resolve(_ context.Context, ref canon.Ref) (canon.Ref, error) {
	if r.armed.Load() {
		r.clock.Advance(r.d)
	}
	out := canon.Ref{Name: ref.Name, Kind: ref.Kind, Size: 3}
	out.SHA256[0] = 1
	return out, nil
}

// TestExecuteConsumesWithTheTimeOfConsuming: an approval is spent only
// before its expiry. Execute read the clock once, before re-resolving the
// references, and consumed with that reading, so an approval whose window
// ended while its attachment was being re-hashed was still spent and run.
func TestExecuteConsumesWithTheTimeOfConsuming(t *testing.T) {
	ctx := context.Background()
	res := &slowResolver{d: 20 * time.Minute}
	w := newWorld(t, gate.WithResolver(res))
	res.clock = w.Clock
	tk := approved(t, w, sendEmail("finance@example.com"))
	require.True(t, w.Clock.Now().Before(tk.ExpiresAt))

	res.armed.Store(true) // re-hashing now outlasts the approval
	_, err := w.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrExpired)
	assert.Zero(t, w.Exec.Count(), "an expired approval ran")
}

// TestGrantUseIsJudgedAtTheTimeOfUse: a grant covers calls only until it
// expires. Propose read the clock once, before the policy and the
// references, and took the grant's use with that reading, so a grant that
// expired while the call's attachment was being hashed still approved it.
func TestGrantUseIsJudgedAtTheTimeOfUse(t *testing.T) {
	ctx := context.Background()
	res := &slowResolver{d: 5 * time.Minute}
	w := newWorld(t, gate.WithResolver(res))
	res.clock = w.Clock

	c := sendEmail("finance@example.com")
	first, err := w.Gate.Propose(ctx, c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, first.Status)
	g, err := w.Gate.Desk().Grant(ctx, stepuptest.Approver, gate.GrantSpec{
		Grant: grant.Exact(first.Digest), Uses: 1, ExpiresAt: w.Clock.Now().Add(10 * time.Minute)})
	require.NoError(t, err)
	issued, err := w.Approve(g.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusExecuted, issued.Status)

	w.Clock.Advance(9 * time.Minute) // one minute of the grant left
	res.armed.Store(true)            // hashing the attachment takes five
	c.Session, c.Grant = "sess-2", string(g.ID)
	tk, err := w.Gate.Propose(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status, "an expired grant approved the call")
}

// skewOnce is a store that refuses the first deciding call of each kind
// as skewed, as a store does when the call waited longer than
// store.MaxSkew for its lock.
type skewOnce struct {
	store.Store
	consumed, resolved atomic.Bool
}

func (s *skewOnce) Consume(ctx context.Context, id string, c store.Claim, n store.Note) (store.Approval, error) {
	if !s.consumed.Swap(true) {
		return store.Approval{}, store.ErrClockSkew
	}
	return s.Store.Consume(ctx, id, c, n)
}

func (s *skewOnce) Resolve(ctx context.Context, id string, r store.Resolution, n store.Note) (store.Approval, error) {
	if r.To == store.Approved && !s.resolved.Swap(true) {
		return store.Approval{}, store.ErrClockSkew
	}
	return s.Store.Resolve(ctx, id, r, n)
}

// TestDecisionsRetryASkewedTime: a deciding call the store refused for a
// time gone stale while it waited is asked once more at a fresh time, so
// a busy database does not turn approvals into refusals.
func TestDecisionsRetryASkewedTime(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	st := &skewOnce{Store: w.Store}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0),
		gate.WithExecutor("send_email", w.Exec), gate.WithResolver(canon.FileResolver{Root: w.Dir}))
	require.NoError(t, err)
	tk, err := g.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = stepuptest.Approve(ctx, g.Desk(), w.Authenticator, tk.ID)
	require.NoError(t, err)
	_, err = g.Execute(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, w.Exec.Count())
	assert.True(t, st.consumed.Load() && st.resolved.Load())
}
