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
// once its newest window started more than twice the longest window and
// the clock horizon ago, never sooner, never a key counted since; the
// counts it keeps still decide; a store that cannot prune is left alone.
func TestPruneDeletesOnlyCountsPastTheirWindows(t *testing.T) {
	ctx := context.Background()
	l := off
	l.Session = flood.Rate{N: 5, Per: time.Minute}
	l.User = flood.Rate{N: 100, Per: time.Hour}
	horizon := 2*time.Hour + store.CountHorizon // twice the longest window, and the horizon
	c := newClock()
	s := &recorder{Store: memory.New(nil), newest: map[string]store.CountWindow{}}
	lim := newLimiter(t, s, l, c)
	for _, session := range []string{"s0", "s1", "s2"} {
		require.NoError(t, lim.Admit(ctx, req(session, "user:u")))
	}
	c.Set(t0.Add(horizon - 5*time.Minute))
	n, err := lim.Prune(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, n, "nothing is past its windows yet")
	require.NoError(t, lim.Admit(ctx, req("s3", "user:u")))

	c.Set(t0.Add(horizon + 5*time.Minute))
	n, err = lim.Prune(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, n, "the three sessions' keys of the first hour; not the user's, counted since, nor s3's")
	n, err = lim.Prune(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, n, "pruned once")

	// What is left reads as it was: of the keys counted, the three
	// sessions' first-hour windows read nothing, every other newest
	// window what it counted.
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
	assert.Len(t, s.newest, 5, "three sessions, s3 and the user")

	plain := newLimiter(t, countersOnly{memory.New(nil)}, l, c)
	require.NoError(t, plain.Admit(ctx, req("s0", "user:u")))
	c.Advance(10 * horizon)
	n, err = plain.Prune(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}
