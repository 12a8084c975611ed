package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
			op := ops[i]
			if i+1 < len(ops) && foldsRead(op, ops[i+1]) {
				n, prev, err := addCountAndRead(ctx, tx, op, ops[i+1].Window)
				if err != nil {
					return err
				}
				out[i], out[i+1] = n, prev
				i++
				continue
			}
			n, err := addCount(ctx, tx, op)
			if err != nil {
				return err
			}
			out[i] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// addCount applies one op in the writer's transaction. A read makes no
// window.
func addCount(ctx context.Context, tx runner, op store.CountOp) (int64, error) {
	var n int64
	if op.Delta == 0 {
		err := tx.QueryRowContext(ctx, `SELECT n FROM counters WHERE key = ? AND window_start = ?`,
			op.Key, op.Window.UnixMicro()).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		return n, dbErr(err)
	}
	// The upsert also says how many windows the key has now, so that only
	// an add that left it a third pays for dropping the oldest.
	var windows int64
	err := tx.QueryRowContext(ctx, `INSERT INTO counters (key, window_start, n) VALUES (?, ?, ?)
		ON CONFLICT (key, window_start) DO UPDATE SET n = n + excluded.n
		RETURNING n, (SELECT count(*) FROM counters WHERE key = ?)`,
		op.Key, op.Window.UnixMicro(), op.Delta, op.Key).Scan(&n, &windows)
	if err != nil {
		return 0, dbErr(err)
	}
	if windows <= 2 {
		return n, nil
	}
	return n, dropOldest(ctx, tx, op.Key)
}

// dropOldest keeps the key's two newest windows.
func dropOldest(ctx context.Context, tx runner, key string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM counters WHERE key = ? AND window_start < (
		SELECT window_start FROM counters WHERE key = ? ORDER BY window_start DESC LIMIT 1 OFFSET 1)`, key, key)
	return dbErr(err)
}

// foldsRead reports whether next, a read of another window of op's key,
// can be answered by op's own statement: the shape of a flood rate, a
// count in the current window and a read of the previous one.
func foldsRead(op, next store.CountOp) bool {
	return op.Delta != 0 && next.Delta == 0 && next.Key == op.Key && !next.Window.Equal(op.Window)
}

// addCountAndRead is addCount of op followed by a read of the window
// other of the same key, in one statement while the add keeps at most two
// windows: the upsert touches only op's window, so the other one reads the
// same before and after it. When the add left a third window and the
// oldest is dropped, the read runs after the drop, as it would alone.
func addCountAndRead(ctx context.Context, tx runner, op store.CountOp, other time.Time) (n, prev int64, err error) {
	var (
		windows int64
		read    sql.NullInt64
	)
	err = tx.QueryRowContext(ctx, `INSERT INTO counters (key, window_start, n) VALUES (?, ?, ?)
		ON CONFLICT (key, window_start) DO UPDATE SET n = n + excluded.n
		RETURNING n, (SELECT count(*) FROM counters WHERE key = ?),
			(SELECT n FROM counters WHERE key = ? AND window_start = ?)`,
		op.Key, op.Window.UnixMicro(), op.Delta, op.Key, op.Key, other.UnixMicro()).Scan(&n, &windows, &read)
	if err != nil {
		return 0, 0, dbErr(err)
	}
	if windows <= 2 {
		return n, read.Int64, nil
	}
	if err := dropOldest(ctx, tx, op.Key); err != nil {
		return 0, 0, err
	}
	prev, err = addCount(ctx, tx, store.CountOp{Key: op.Key, Window: other})
	return n, prev, err
}

// IncrStreak implements [store.Counters].
func (s *Store) IncrStreak(ctx context.Context, key string, at time.Time) (int, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, fmt.Errorf("sqlite: incr streak: %w", err)
	}
	var n int
	err := s.write(ctx, "incr streak", func(tx runner) error {
		return dbErr(tx.QueryRowContext(ctx, `INSERT INTO streaks (key, count, last) VALUES (?, 1, ?)
			ON CONFLICT (key) DO UPDATE SET count = count + 1, last = excluded.last RETURNING count`,
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
