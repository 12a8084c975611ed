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
		for i, op := range ops {
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
	// Keep the key's two newest windows.
	_, err = tx.ExecContext(ctx, `DELETE FROM counters WHERE key = ? AND window_start < (
		SELECT window_start FROM counters WHERE key = ? ORDER BY window_start DESC LIMIT 1 OFFSET 1)`, op.Key, op.Key)
	return n, dbErr(err)
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
