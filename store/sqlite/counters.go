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
	var n int64
	if delta == 0 {
		// A read: no write transaction, no commit.
		if err := s.enter(ctx, "add count"); err != nil {
			return 0, err
		}
		err := s.reader().QueryRowContext(ctx, `SELECT n FROM counters WHERE key = ? AND window_start = ?`,
			key, window.UnixMicro()).Scan(&n)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return 0, nil
		case err != nil:
			return 0, s.fail(ctx, "add count", err)
		}
		return n, nil
	}
	err := s.write(ctx, "add count", func(tx runner) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO counters (key, window_start, n) VALUES (?, ?, ?)
			ON CONFLICT (key, window_start) DO UPDATE SET n = n + excluded.n RETURNING n`,
			key, window.UnixMicro(), delta).Scan(&n)
		if err != nil {
			return dbErr(err)
		}
		// Keep the key's two newest windows.
		_, err = tx.ExecContext(ctx, `DELETE FROM counters WHERE key = ? AND window_start < (
			SELECT window_start FROM counters WHERE key = ? ORDER BY window_start DESC LIMIT 1 OFFSET 1)`, key, key)
		return dbErr(err)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
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
