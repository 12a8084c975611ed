package records

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Counters checks [store.Counters.AddCount]: a key keeps its two newest
// windows, adds to a forgotten window are not kept, and bad keys are
// refused.
func Counters(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	w := func(i int) time.Time { return fixture.T0.Add(time.Duration(i) * time.Minute) }
	steps := []struct {
		name   string
		key    string
		window time.Time
		delta  int64
		want   int64
	}{
		{"first add", "rate:u1", w(0), 1, 1},
		{"same window", "rate:u1", w(0), 1, 2},
		{"larger delta", "rate:u1", w(0), 5, 7},
		{"negative delta", "rate:u1", w(0), -2, 5},
		{"read with zero", "rate:u1", w(0), 0, 5},
		{"other key", "rate:u2", w(0), 1, 1},
		{"new window starts from zero", "rate:u1", w(1), 1, 1},
		{"previous window is kept", "rate:u1", w(0), 0, 5},
		{"third window", "rate:u1", w(2), 3, 3},
		{"two newest kept", "rate:u1", w(1), 0, 1},
		{"older ones forgotten", "rate:u1", w(0), 0, 0},
		{"forgotten adds are not kept", "rate:u1", w(0), 4, 4},
		{"still forgotten", "rate:u1", w(0), 0, 0},
		{"newest intact", "rate:u1", w(2), 0, 3},
		{"other key intact", "rate:u2", w(0), 0, 1},
	}
	for _, st := range steps {
		got, err := s.AddCount(ctx, st.key, st.window, st.delta)
		require.NoError(t, err, st.name)
		assert.Equal(t, st.want, got, st.name)
	}
	_, err := s.AddCount(ctx, "", w(0), 1)
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.AddCount(ctx, string(make([]byte, store.MaxKeySize+1)), w(0), 1)
	assert.ErrorIs(t, err, store.ErrTooLarge)
}

// Streaks checks the streaks of [store.Counters]: they count up, reset to
// zero, and keys are independent.
func Streaks(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	zero, err := s.GetStreak(ctx, "deny:u1")
	require.NoError(t, err)
	assert.Equal(t, store.Streak{}, zero, "an unknown streak is zero")
	for i := 1; i <= 3; i++ {
		n, err := s.IncrStreak(ctx, "deny:u1", fixture.T0.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
		assert.Equal(t, i, n)
	}
	_, err = s.IncrStreak(ctx, "deny:u2", fixture.T0)
	require.NoError(t, err)
	got, err := s.GetStreak(ctx, "deny:u1")
	require.NoError(t, err)
	assert.Equal(t, 3, got.Count)
	assert.True(t, fixture.T0.Add(3*time.Second).Equal(got.Last))

	require.NoError(t, s.ResetStreak(ctx, "deny:u1"))
	got, err = s.GetStreak(ctx, "deny:u1")
	require.NoError(t, err)
	assert.Equal(t, 0, got.Count)
	n, err := s.IncrStreak(ctx, "deny:u1", fixture.T0)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "a reset streak counts from zero")
	other, err := s.GetStreak(ctx, "deny:u2")
	require.NoError(t, err)
	assert.Equal(t, 1, other.Count, "keys are independent")
	require.NoError(t, s.ResetStreak(ctx, "never-set"), "resetting an unknown streak is fine")
	_, err = s.IncrStreak(ctx, "", fixture.T0)
	assert.ErrorIs(t, err, store.ErrInvalid)
}

// CounterBatches checks [store.Counters.AddCounts] against AddCount: a
// generator makes batches of adds and reads over a few keys and windows;
// applied as batches to one store and op by op to another, they return the
// same counts and leave the same state. A batch with a bad op applies
// none of its ops.
func CounterBatches(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	batched, single := newStore(t), newStore(t)
	rng := rand.New(rand.NewPCG(5, 6))
	w := func(i int) time.Time { return fixture.T0.Add(time.Duration(i) * time.Minute) }
	for round := range 60 {
		ops := make([]store.CountOp, 1+rng.IntN(12))
		for i := range ops {
			ops[i] = store.CountOp{Key: fmt.Sprintf("rate:k%d", rng.IntN(3)), Window: w(round/6 + rng.IntN(3) - 1),
				Delta: []int64{0, 0, 1, 1, -1, 3}[rng.IntN(6)]}
		}
		got, err := batched.AddCounts(ctx, ops)
		require.NoError(t, err)
		require.Len(t, got, len(ops))
		for i, op := range ops {
			want, err := single.AddCount(ctx, op.Key, op.Window, op.Delta)
			require.NoError(t, err)
			assert.Equal(t, want, got[i], "round %d, op %d (%+v)", round, i, op)
		}
	}
	t.Run("AllOrNothing", func(t *testing.T) {
		s := newStore(t)
		_, err := s.AddCounts(ctx, []store.CountOp{{Key: "rate:a", Window: w(0), Delta: 1}, {Key: "", Window: w(0), Delta: 1}})
		assert.ErrorIs(t, err, store.ErrInvalid)
		n, err := s.AddCount(ctx, "rate:a", w(0), 0)
		require.NoError(t, err)
		assert.Zero(t, n, "a refused batch applies none of its ops")
		_, err = s.AddCounts(ctx, make([]store.CountOp, store.MaxCountOps+1))
		assert.ErrorIs(t, err, store.ErrInvalid)
		out, err := s.AddCounts(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, out)
	})
}

// StreakBatches checks [store.GetStreaks] against [store.Counters.GetStreak]:
// a generator raises and resets streaks over a few keys, and after each
// step a batch of keys (repeated, unknown and known, in any order) reads
// what one GetStreak per key reads. Bad keys and too many keys are
// refused. It runs through the store's own [store.StreakReader] when it
// has one, and through the fallback otherwise.
func StreakBatches(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	rng := rand.New(rand.NewPCG(7, 8))
	key := func() string { return fmt.Sprintf("deny:k%d", rng.IntN(5)) }
	for step := range 80 {
		switch rng.IntN(3) {
		case 0, 1:
			_, err := s.IncrStreak(ctx, key(), fixture.T0.Add(time.Duration(step)*time.Second))
			require.NoError(t, err)
		default:
			require.NoError(t, s.ResetStreak(ctx, key()))
		}
		keys := make([]string, rng.IntN(7))
		for i := range keys {
			keys[i] = key()
		}
		got, err := store.GetStreaks(ctx, s, keys)
		require.NoError(t, err)
		require.Len(t, got, len(keys))
		for i, k := range keys {
			want, err := s.GetStreak(ctx, k)
			require.NoError(t, err)
			assert.Equal(t, want.Count, got[i].Count, "step %d, key %s", step, k)
			assert.True(t, want.Last.Equal(got[i].Last), "step %d, key %s: last %v, want %v", step, k, got[i].Last, want.Last)
		}
	}
	// Keys any caller may pass: quotes, brackets, commas, backslashes,
	// other scripts, invalid UTF-8 and NUL. A backend may refuse a key as
	// a whole (PostgreSQL's text holds neither NUL nor invalid UTF-8), but
	// one it stores reads back under its own bytes and no other's.
	odd := []string{`deny:"]`, `deny:a,b`, `deny:\`, "deny:ü", "deny:u\u0308", "deny:\xff", "deny:\xef\xbf\xbd", "deny:a\x00b", "deny:a", strings.Repeat("k", store.MaxKeySize)}
	var stored []string
	for i, k := range odd {
		for range i + 1 {
			if _, err := s.IncrStreak(ctx, k, fixture.T0); err != nil {
				break
			}
		}
		if st, err := s.GetStreak(ctx, k); err == nil && st.Count == i+1 {
			stored = append(stored, k)
		}
	}
	require.Contains(t, stored, "deny:ü")
	got, err := store.GetStreaks(ctx, s, odd)
	if err == nil {
		for i, k := range odd {
			want, err := s.GetStreak(ctx, k)
			if err == nil {
				assert.Equal(t, want.Count, got[i].Count, "key %q", k)
			}
		}
	}
	got, err = store.GetStreaks(ctx, s, stored)
	require.NoError(t, err)
	for i, k := range stored {
		assert.Equal(t, slices.Index(odd, k)+1, got[i].Count, "key %q", k)
	}
	many := make([]string, 0, 40)
	for i := range cap(many) {
		many = append(many, fmt.Sprintf("deny:k%d", i%7))
	}
	got, err = store.GetStreaks(ctx, s, many)
	require.NoError(t, err)
	for i, k := range many {
		want, err := s.GetStreak(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, want.Count, got[i].Count, "key %q of %d", k, len(many))
	}

	_, err = store.GetStreaks(ctx, s, []string{"deny:k1", ""})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = store.GetStreaks(ctx, s, make([]string, store.MaxCountOps+1))
	assert.ErrorIs(t, err, store.ErrInvalid)
}
