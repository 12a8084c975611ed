package flood_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// recorder is a memory store that notes each key's newest window counted
// and its count there.
type recorder struct {
	*memory.Store
	newest map[string]store.CountWindow
}

func (r *recorder) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	out, err := r.Store.AddCounts(ctx, ops)
	for i, op := range ops {
		if w, ok := r.newest[op.Key]; err == nil && op.Delta != 0 && (!ok || !op.Window.Before(w.Start)) {
			r.newest[op.Key] = store.CountWindow{Start: op.Window, N: out[i]}
		}
	}
	return out, err
}

// countersOnly hides a store's CountPruner.
type countersOnly struct{ store.Counters }

// TestPruneDeletesOnlyCountsPastTheirWindows: Prune deletes a rate's key
// once its newest window started more than twice that rate's window and
// the clock horizon ago, never sooner, never a key counted since; the
// counts of another limiter's longer window on the same store are kept
// until twice the longest window allowed has passed; a store that cannot
// prune is left alone.
func TestPruneDeletesOnlyCountsPastTheirWindows(t *testing.T) {
	ctx := context.Background()
	l := off
	l.Session = flood.Rate{N: 5, Per: time.Minute}
	l.User = flood.Rate{N: 100, Per: time.Hour}
	c := newClock()
	s := &recorder{Store: memory.New(nil), newest: map[string]store.CountWindow{}}
	lim := newLimiter(t, s, l, c)
	weekly := off
	weekly.User = flood.Rate{N: 3, Per: 7 * 24 * time.Hour}
	other := newLimiter(t, s, weekly, c) // another service's limits on the same store
	for _, session := range []string{"s0", "s1", "s2"} {
		require.NoError(t, lim.Admit(ctx, req(session, "user:u")))
	}
	for range 3 {
		require.NoError(t, other.Admit(ctx, req("w", "user:w")))
	}
	require.ErrorIs(t, other.Admit(ctx, req("w", "user:w")), flood.ErrRateLimited)
	pruneAt := func(d time.Duration) int {
		t.Helper()
		c.Set(t0.Add(d))
		n, err := lim.Prune(ctx)
		require.NoError(t, err)
		return n
	}
	sessionGone := 2*time.Minute + store.CountHorizon
	userGone := 2*time.Hour + store.CountHorizon
	assert.Equal(t, 0, pruneAt(sessionGone-time.Minute), "the sessions' minute still matters")
	assert.Equal(t, 3, pruneAt(sessionGone+time.Minute), "the three sessions' keys; not the user's hour")
	require.NoError(t, lim.Admit(ctx, req("s3", "user:u"))) // counts the user again, in a later hour
	assert.Equal(t, 0, pruneAt(userGone+time.Minute), "the user was counted since")
	assert.Equal(t, 0, pruneAt(userGone+time.Minute), "pruned once")
	require.ErrorIs(t, other.Admit(ctx, req("w", "user:w")), flood.ErrRateLimited, "another limiter's week still counts")

	// What is left reads as it was: of the keys counted, the three
	// sessions' first windows read nothing, every other newest window
	// what it counted.
	gone := 0
	for key, w := range s.newest {
		got, err := s.AddCount(ctx, key, w.Start, 0)
		require.NoError(t, err)
		if got == 0 {
			gone++
			continue
		}
		assert.Equal(t, w.N, got, key)
	}
	assert.Equal(t, 3, gone)
	assert.Len(t, s.newest, 6, "three sessions, s3, the user and the weekly user")

	// Past twice the longest window allowed, every key goes, whoever's.
	assert.Equal(t, 3, pruneAt(2*flood.MaxRateWindow+store.CountHorizon+48*time.Hour), "s3, the user and the weekly user")

	plain := newLimiter(t, countersOnly{memory.New(nil)}, l, c)
	require.NoError(t, plain.Admit(ctx, req("s0", "user:u")))
	c.Advance(10 * userGone)
	n, err := plain.Prune(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}
