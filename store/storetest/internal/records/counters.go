package records

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Counters checks [store.Counters.AddCount]: a key keeps its two newest
// windows, an add to an older window counts in the newest, a refund to
// zero keeps nothing, and bad keys are refused.
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
		{"an add to a forgotten window counts in the newest", "rate:u1", w(0), 4, 7},
		{"and makes no window", "rate:u1", w(0), 0, 0},
		{"newest has it", "rate:u1", w(2), 0, 7},
		{"its refund comes back out of the newest", "rate:u1", w(0), -4, 3},
		{"an add to the one before it counts there, and returns both", "rate:u1", w(1), 1, 5},
		{"which reads its own", "rate:u1", w(1), 0, 2},
		{"and its refund", "rate:u1", w(1), -1, 4},
		{"other key intact", "rate:u2", w(0), 0, 1},
		{"a refund to zero", "rate:u2", w(0), -1, 0},
		{"keeps no window: an older add is a window of its own", "rate:u2", w(-5), 1, 1},
		{"which is kept", "rate:u2", w(-5), 0, 1},
		{"a window from a clock far ahead", "rate:u3", w(0).Add(365 * 24 * time.Hour), 2, 2},
		{"is counted in the present", "rate:u3", w(0), 1, 3},
		{"and kept no more", "rate:u3", w(0).Add(365 * 24 * time.Hour), 0, 0},
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

// CounterClocks holds [store.Counters.AddCounts] to [store.ApplyCount]
// under clocks that disagree: a generator counts keys of many window
// lengths from a present that advances, with ops dated by clocks that lag
// (a little, or by hours), run ahead (within [store.CountHorizon], just
// past it, by a month or a year) or step back, and refunds. After each
// batch every kept window reads what the rule keeps, and the rule's
// promises hold: an add never counts less than the key's newest window
// held when it is no more than the horizon before it (fail closed), and
// windows beyond the horizon after an add are counted in it, never lost.
func CounterClocks(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	rng := rand.New(rand.NewPCG(11, 12))
	pers := []time.Duration{time.Millisecond, time.Second, 10 * time.Minute, time.Hour, 36 * time.Hour}
	offsets := []time.Duration{0, 0, 0, -time.Second, -time.Minute, -10 * time.Minute, -3 * time.Hour,
		-store.CountHorizon, -store.CountHorizon - time.Microsecond, time.Minute, store.CountHorizon,
		store.CountHorizon + time.Microsecond, 30 * 24 * time.Hour, 365 * 24 * time.Hour}
	model := map[string][]store.CountWindow{}
	present := fixture.T0
	for round := range 150 {
		present = present.Add(time.Duration(rng.Int64N(int64(20 * time.Minute))))
		ops := make([]store.CountOp, 1+rng.IntN(6))
		for i := range ops {
			per := pers[rng.IntN(len(pers))]
			at := present.Add(offsets[rng.IntN(len(offsets))])
			ops[i] = store.CountOp{Key: fmt.Sprintf("rate:c%d/%v", rng.IntN(2), per), Window: at.Truncate(per),
				Delta: []int64{0, 1, 1, 1, -1, 2}[rng.IntN(6)]}
		}
		got, err := s.AddCounts(ctx, ops)
		require.NoError(t, err)
		for i, op := range ops {
			before := model[op.Key]
			var want int64
			if op.Delta == 0 {
				for _, w := range before {
					if w.Start.Equal(op.Window) {
						want = w.N
					}
				}
			} else {
				model[op.Key], want = store.ApplyCount(before, op.Window, op.Delta)
			}
			require.Equal(t, want, got[i], "round %d, op %d (%+v), kept %v", round, i, op, before)
			if op.Delta == 0 || len(before) == 0 {
				continue
			}
			newest := before[len(before)-1]
			if lag := newest.Start.Sub(op.Window); lag > 0 && lag <= store.CountHorizon && newest.N > 0 && op.Delta > 0 {
				assert.GreaterOrEqual(t, got[i], newest.N+op.Delta, "round %d: an add behind the newest window is counted in it", round)
			}
			var ahead int64
			for _, w := range before {
				if w.Start.After(op.Window.Add(store.CountHorizon)) {
					ahead += w.N
				}
			}
			if ahead > 0 && op.Delta > 0 {
				assert.GreaterOrEqual(t, got[i], ahead+op.Delta, "round %d: windows far ahead are counted in the add", round)
			}
		}
		for key, ws := range model {
			for _, w := range ws {
				n, err := s.AddCount(ctx, key, w.Start, 0)
				require.NoError(t, err)
				assert.Equal(t, w.N, n, "round %d: key %s window %v", round, key, w.Start)
			}
		}
	}
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

	// Last only moves forward, whatever order replicas' clocks report.
	rng := rand.New(rand.NewPCG(9, 10))
	for run := range 20 {
		key := fmt.Sprintf("deny:order%d", run)
		var latest time.Time
		for range 1 + rng.IntN(6) {
			at := fixture.T0.Add(time.Duration(rng.Int64N(int64(2*time.Hour))) - time.Hour).Truncate(time.Microsecond)
			_, err := s.IncrStreak(ctx, key, at)
			require.NoError(t, err)
			if at.After(latest) {
				latest = at
			}
			got, err := s.GetStreak(ctx, key)
			require.NoError(t, err)
			assert.True(t, latest.Equal(got.Last), "run %d: last %v, want the latest %v", run, got.Last, latest)
		}
	}
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

// PruneCounts checks [store.CountPruner.PruneCounts], where the store
// implements it: a generator counts keys under several prefixes (one a
// prefix of another's name, one with bytes above ASCII) with newest
// windows spread around a cut, then prunes one prefix before the cut a
// few keys at a time. Exactly the keys of that prefix whose newest window
// started before the cut go, with every window; every other key keeps
// its counts. Counts added to a key while it is pruned are never lost,
// and bad arguments are refused.
func PruneCounts(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	p, ok := s.(store.CountPruner)
	if !ok {
		t.Skip("the store does not prune counters")
	}
	rng := rand.New(rand.NewPCG(8, 15))
	cut := fixture.T0.Add(10 * 24 * time.Hour)
	prefixes := []string{"flood/v2/rate/", "flood/v2/rate/session/", "flood/v2/ratex/", "session/v1/ended/", "flood/v2/rate/é/"}
	type kept struct {
		key            string
		older, newest  time.Time
		nOlder, nNewer int64
	}
	var all []kept
	for i := range 120 {
		k := kept{key: fmt.Sprintf("%s%d", prefixes[rng.IntN(len(prefixes))], i)}
		k.newest = cut.Add(time.Duration(rng.IntN(240)-120) * time.Minute)
		k.nNewer = int64(1 + rng.IntN(5))
		ops := []store.CountOp{}
		if rng.IntN(2) == 0 {
			k.older, k.nOlder = k.newest.Add(-time.Hour), int64(1+rng.IntN(5))
			ops = append(ops, store.CountOp{Key: k.key, Window: k.older, Delta: k.nOlder})
		}
		ops = append(ops, store.CountOp{Key: k.key, Window: k.newest, Delta: k.nNewer})
		_, err := s.AddCounts(ctx, ops)
		require.NoError(t, err)
		all = append(all, k)
	}
	prefix := "flood/v2/rate/"
	want := 0
	for _, k := range all {
		if strings.HasPrefix(k.key, prefix) && k.newest.Before(cut) {
			want++
		}
	}
	require.Greater(t, want, 10)
	got := 0
	for range 100 {
		n, err := p.PruneCounts(ctx, prefix, cut, 7)
		require.NoError(t, err)
		require.LessOrEqual(t, n, 7, "at most the limit")
		if n == 0 {
			break
		}
		got += n
	}
	assert.Equal(t, want, got, "keys pruned")
	for _, k := range all {
		ops := []store.CountOp{{Key: k.key, Window: k.newest}}
		if !k.older.IsZero() {
			ops = append(ops, store.CountOp{Key: k.key, Window: k.older})
		}
		n, err := s.AddCounts(ctx, ops)
		require.NoError(t, err)
		if strings.HasPrefix(k.key, prefix) && k.newest.Before(cut) {
			assert.Equal(t, make([]int64, len(ops)), n, "%s pruned", k.key)
			continue
		}
		want := []int64{k.nNewer}
		if !k.older.IsZero() {
			want = append(want, k.nOlder)
		}
		assert.Equal(t, want, n, "%s kept", k.key)
	}

	// Adds racing a prune of their keys, each key's first add in the
	// present meeting the prune of its old window, in batches of two keys
	// so that batches lock keys others hold: every add counts, and none
	// fails.
	const adders, raced = 4, 40
	for i := range raced {
		_, err := s.AddCount(ctx, fmt.Sprintf("%sraced/%d", prefix, i), cut.Add(-time.Hour), 3)
		require.NoError(t, err)
	}
	done := make(chan struct{})
	errs := make(chan error, adders+1)
	go func() {
		defer func() { errs <- nil }()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := p.PruneCounts(ctx, prefix+"raced/", cut, 0); err != nil {
				errs <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	counted := make([][raced]int64, adders)
	for a := range adders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(a), 1))
			for _, i := range r.Perm(raced) {
				j := (i + 1 + r.IntN(raced-1)) % raced
				ops := []store.CountOp{
					{Key: fmt.Sprintf("%sraced/%d", prefix, i), Window: cut, Delta: 1},
					{Key: fmt.Sprintf("%sraced/%d", prefix, j), Window: cut, Delta: 1},
				}
				if _, err := s.AddCounts(ctx, ops); err != nil {
					errs <- err
					return
				}
				counted[a][i]++
				counted[a][j]++
			}
		}()
	}
	wg.Wait()
	close(done)
	require.NoError(t, <-errs)
	for i := range raced {
		var want int64
		for a := range adders {
			want += counted[a][i]
		}
		n, err := s.AddCount(ctx, fmt.Sprintf("%sraced/%d", prefix, i), cut, 0)
		require.NoError(t, err)
		assert.Equal(t, want, n, "adds racing a prune of key %d", i)
	}

	for name, c := range map[string]struct {
		prefix string
		before time.Time
		limit  int
	}{
		"empty prefix": {"", cut, 1}, "no time": {prefix, time.Time{}, 1},
		"negative limit": {prefix, cut, -1}, "over the limit": {prefix, cut, store.MaxPruneKeys + 1},
	} {
		_, err := p.PruneCounts(ctx, c.prefix, c.before, c.limit)
		assert.ErrorIs(t, err, store.ErrInvalid, name)
	}
	_, err := p.PruneCounts(ctx, string(make([]byte, store.MaxKeySize+1)), cut, 1)
	assert.ErrorIs(t, err, store.ErrTooLarge)
}
