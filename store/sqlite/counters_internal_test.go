package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

// TestCountersKeepTwoWindows: whatever order windows are added in, each
// key keeps at most two rows, what [store.ApplyCount] keeps, and a key
// refunded to zero keeps none.
func TestCountersKeepTwoWindows(t *testing.T) {
	ctx := t.Context()
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
	w := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	var model []store.CountWindow
	for _, i := range []int{0, 0, 1, 1, 2, 0, 3, 3, 1, 5, 4, 6, 6, 2} {
		_, err := s.AddCounts(ctx, []store.CountOp{{Key: "k", Window: w(i), Delta: 1}, {Key: "other", Window: w(i % 2), Delta: 2},
			{Key: "k", Window: w(i - 1)}})
		require.NoError(t, err)
		model, _ = store.ApplyCount(model, w(i), 1)
		var rows int64
		require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM counters WHERE key = 'k'`).Scan(&rows))
		assert.LessOrEqual(t, rows, int64(2), "after an add to window %d", i)
		var others int64
		require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM counters WHERE key = 'other'`).Scan(&others))
		assert.LessOrEqual(t, others, int64(2))
	}
	for _, m := range model {
		n, err := s.AddCount(ctx, "k", m.Start, 0)
		require.NoError(t, err)
		assert.Equal(t, m.N, n, "window %v", m.Start)
	}
	for _, m := range model {
		_, err := s.AddCount(ctx, "k", m.Start, -m.N)
		require.NoError(t, err)
	}
	var rows int64
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM counters WHERE key = 'k'`).Scan(&rows))
	assert.Zero(t, rows, "a key refunded to zero keeps no row")
}
