package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/store"
)

// AddCount implements [store.Counters].
func (s *Store) AddCount(ctx context.Context, key string, window time.Time, delta int64) (int64, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, fmt.Errorf("sqlite: add count: %w", err)
	}
	n, err := s.AddCounts(ctx, []store.CountOp{{Key: key, Window: window, Delta: delta}})
	if err != nil {
		return 0, err
	}
	return n[0], nil
}

// AddCounts implements [store.Counters]: reads alone on a reader, with no
// write transaction; any add in one transaction of the writer, whose
// commit does not wait for the disk (see Durability in the package doc).
func (s *Store) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	if err := store.CheckCountOps(ops); err != nil {
		return nil, fmt.Errorf("sqlite: add counts: %w", err)
	}
	out := make([]int64, len(ops))
	reads := true
	for _, op := range ops {
		reads = reads && op.Delta == 0
	}
	if reads {
		if err := s.enter(ctx, "add count"); err != nil {
			return nil, err
		}
		for i, op := range ops {
			err := s.reader().QueryRowContext(ctx, `SELECT n FROM counters WHERE key = ? AND window_start = ?`,
				op.Key, op.Window.UnixMicro()).Scan(&out[i])
			switch {
			case errors.Is(err, sql.ErrNoRows):
				out[i] = 0
			case err != nil:
				return nil, s.fail(ctx, "add count", err)
			}
		}
		return out, nil
	}
	err := s.writeRelaxed(ctx, "add count", func(tx runner) error {
		for i := 0; i < len(ops); i++ {
			n, after, err := addCount(ctx, tx, ops[i])
			if err != nil {
				return err
			}
			out[i] = n
			// A read of another window of the key just counted (a flood
			// rate reads its previous window) is answered from the windows
			// the add left, which is what the table holds now.
			if next := i + 1; ops[i].Delta != 0 && next < len(ops) && ops[next].Delta == 0 && ops[next].Key == ops[i].Key {
				out[next] = countIn(after, ops[next].Window)
				i = next
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// addCount applies one op in the writer's transaction: a read makes no
// window; an add reads the key's windows, applies [store.ApplyCount] and
// writes back only what changed, so a key left with no window keeps no
// row. It returns the count and, for an add, the windows it left.
func addCount(ctx context.Context, tx runner, op store.CountOp) (int64, []store.CountWindow, error) {
	var n int64
	if op.Delta == 0 {
		err := tx.QueryRowContext(ctx, `SELECT n FROM counters WHERE key = ? AND window_start = ?`,
			op.Key, op.Window.UnixMicro()).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil, nil
		}
		return n, nil, dbErr(err)
	}
	kept, err := windows(ctx, tx, op.Key)
	if err != nil {
		return 0, nil, err
	}
	after, n := store.ApplyCount(kept, op.Window, op.Delta)
	for _, w := range kept {
		if !slices.ContainsFunc(after, func(a store.CountWindow) bool { return a.Start.Equal(w.Start) }) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM counters WHERE key = ? AND window_start = ?`,
				op.Key, w.Start.UnixMicro()); err != nil {
				return 0, nil, dbErr(err)
			}
		}
	}
	for _, w := range after {
		if slices.Contains(kept, w) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO counters (key, window_start, n) VALUES (?, ?, ?)
			ON CONFLICT (key, window_start) DO UPDATE SET n = excluded.n`,
			op.Key, w.Start.UnixMicro(), w.N); err != nil {
			return 0, nil, dbErr(err)
		}
	}
	return n, after, nil
}

// countIn is the count windows hold for the window starting at start.
func countIn(windows []store.CountWindow, start time.Time) int64 {
	for _, w := range windows {
		if w.Start.Equal(start) {
			return w.N
		}
	}
	return 0
}

// windows reads the windows key keeps, oldest first.
func windows(ctx context.Context, tx runner, key string) ([]store.CountWindow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT window_start, n FROM counters WHERE key = ? ORDER BY window_start`, key)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	var out []store.CountWindow
	for rows.Next() {
		var (
			start int64
			w     store.CountWindow
		)
		if err := rows.Scan(&start, &w.N); err != nil {
			return nil, dbErr(err)
		}
		w.Start = time.UnixMicro(start)
		out = append(out, w)
	}
	return out, dbErr(rows.Err())
}

// IncrStreak implements [store.Counters].
func (s *Store) IncrStreak(ctx context.Context, key string, at time.Time) (int, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, fmt.Errorf("sqlite: incr streak: %w", err)
	}
	var n int
	err := s.write(ctx, "incr streak", func(tx runner) error {
		return dbErr(tx.QueryRowContext(ctx, `INSERT INTO streaks (key, count, last) VALUES (?, 1, ?)
			ON CONFLICT (key) DO UPDATE SET count = count + 1,
				last = CASE WHEN last IS NULL OR excluded.last > last THEN excluded.last ELSE last END
			RETURNING count`,
			key, micros(at)).Scan(&n))
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// ResetStreak implements [store.Counters].
func (s *Store) ResetStreak(ctx context.Context, key string) error {
	return s.write(ctx, "reset streak", func(tx runner) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM streaks WHERE key = ?`, key)
		return dbErr(err)
	})
}

// GetStreak implements [store.Counters].
func (s *Store) GetStreak(ctx context.Context, key string) (store.Streak, error) {
	if err := s.enter(ctx, "get streak"); err != nil {
		return store.Streak{}, err
	}
	var (
		st   store.Streak
		last sql.NullInt64
	)
	err := s.reader().QueryRowContext(ctx, `SELECT count, last FROM streaks WHERE key = ?`, key).Scan(&st.Count, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Streak{}, nil
	}
	if err != nil {
		return store.Streak{}, s.fail(ctx, "get streak", err)
	}
	st.Last = fromMicros(last)
	return st, nil
}

var _ store.StreakReader = (*Store)(nil)

// GetStreaks implements [store.StreakReader]: one statement, with one
// parameter per key. The parameters are padded to a power of two (with the
// last key again), so that at most eleven statement texts are prepared.
func (s *Store) GetStreaks(ctx context.Context, keys []string) ([]store.Streak, error) {
	if err := store.CheckStreakKeys(keys); err != nil {
		return nil, fmt.Errorf("sqlite: get streaks: %w", err)
	}
	if err := s.enter(ctx, "get streaks"); err != nil {
		return nil, err
	}
	out := make([]store.Streak, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	n := 1
	for n < len(keys) {
		n *= 2
	}
	args := make([]any, n)
	for i := range args {
		args[i] = keys[min(i, len(keys)-1)]
	}
	rows, err := s.reader().QueryContext(ctx, `SELECT key, count, last FROM streaks WHERE key IN (`+placeholders(n)+`)`, args...)
	if err != nil {
		return nil, s.fail(ctx, "get streaks", err)
	}
	defer rows.Close()
	found := make(map[string]store.Streak, len(keys))
	for rows.Next() {
		var (
			key  string
			st   store.Streak
			last sql.NullInt64
		)
		if err := rows.Scan(&key, &st.Count, &last); err != nil {
			return nil, s.fail(ctx, "get streaks", err)
		}
		st.Last = fromMicros(last)
		found[key] = st
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, "get streaks", err)
	}
	for i, k := range keys {
		out[i] = found[k]
	}
	return out, nil
}

// queryPruneKeys selects up to a limit of the keys in a prefix's range
// whose newest window started before a time: its arguments are the
// prefix, the end of its range ("" for none), the time and the limit.
const queryPruneKeys = `SELECT key FROM counters WHERE key >= ?1 AND (?2 = '' OR key < ?2)
	GROUP BY key HAVING max(window_start) < ?3 LIMIT ?4`

// PruneCounts implements [store.CountPruner], in one transaction of the
// writer whose commit does not wait for the disk: a prune lost to a
// crash is made again by the next.
func (s *Store) PruneCounts(ctx context.Context, prefix string, before time.Time, limit int) (int, error) {
	limit, err := store.CheckPrune(prefix, before, limit)
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune counts: %w", err)
	}
	n := 0
	err = s.writeRelaxed(ctx, "prune counts", func(tx runner) error {
		rows, err := tx.QueryContext(ctx, queryPruneKeys, prefix, store.PrefixEnd(prefix), before.UnixMicro(), limit)
		if err != nil {
			return dbErr(err)
		}
		var keys []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return dbErr(err)
			}
			keys = append(keys, k)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return dbErr(err)
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, `DELETE FROM counters WHERE key = ?`, k); err != nil {
				return dbErr(err)
			}
		}
		n = len(keys)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
