package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

// AddCount implements [store.Counters] with one upsert on the key's row,
// which holds its two newest windows (w1 older, w2 newest). Every SET
// expression reads the row as it was, and concurrent upserts on one key
// queue on its row lock, so no add is lost. For a window w:
//
//	w = w2 or w = w1     add to that window
//	w > w2               w2 becomes w1, w starts from delta
//	w1 < w < w2 (or no w1) w replaces w1
//	w < w1               counted (delta is returned) but not kept
func (s *Store) AddCount(ctx context.Context, key string, window time.Time, delta int64) (int64, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, fmt.Errorf("add count: %w", err)
	}
	n, err := s.AddCounts(ctx, []store.CountOp{{Key: key, Window: window, Delta: delta}})
	if err != nil {
		return 0, err
	}
	return n[0], nil
}

// queryAddCount is AddCount's upsert; queryReadCount reads a window and
// makes none.
const (
	queryAddCount = `INSERT INTO counters AS c (key, w1, n1, w2, n2) VALUES ($1, NULL, 0, $2, $3)
		ON CONFLICT (key) DO UPDATE SET
			w1 = CASE
				WHEN $2 > c.w2 THEN c.w2
				WHEN $2 < c.w2 AND (c.w1 IS NULL OR $2 > c.w1) THEN $2
				ELSE c.w1 END,
			n1 = CASE
				WHEN $2 = c.w1 THEN c.n1 + $3
				WHEN $2 > c.w2 THEN c.n2
				WHEN $2 < c.w2 AND (c.w1 IS NULL OR $2 > c.w1) THEN $3
				ELSE c.n1 END,
			w2 = CASE WHEN $2 > c.w2 THEN $2 ELSE c.w2 END,
			n2 = CASE
				WHEN $2 = c.w2 THEN c.n2 + $3
				WHEN $2 > c.w2 THEN $3
				ELSE c.n2 END
		RETURNING CASE WHEN w2 = $2 THEN n2 WHEN w1 = $2 THEN n1 ELSE $3 END`
	queryReadCount = `SELECT CASE WHEN w2 = $2 THEN n2 WHEN w1 = $2 THEN n1 ELSE 0 END FROM counters WHERE key = $1`
)

// AddCounts implements [store.Counters]: reads alone as one statement or
// one transaction of them; with any add, one batch in a transaction that
// does not wait for the WAL (see Durability in the package doc).
func (s *Store) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	const op = "add count"
	if err := store.CheckCountOps(ops); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out := make([]int64, len(ops))
	apply := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) error {
		for i, c := range ops {
			query, args := queryAddCount, []any{c.Key, c.Window, c.Delta}
			if c.Delta == 0 {
				query, args = queryReadCount, args[:2]
			}
			err := q.QueryRow(ctx, query, args...).Scan(&out[i])
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				out[i] = 0
			case err != nil:
				return err
			}
		}
		return nil
	}
	reads := true
	for _, c := range ops {
		reads = reads && c.Delta == 0
	}
	var err error
	switch {
	case !reads:
		// Counts decide nothing: their commit does not wait for the WAL
		// (see Durability in the package doc).
		err = s.relaxed(ctx, func(b *pgx.Batch) {
			for _, c := range ops {
				if c.Delta == 0 {
					b.Queue(queryReadCount, c.Key, c.Window)
				} else {
					b.Queue(queryAddCount, c.Key, c.Window, c.Delta)
				}
			}
		}, func(br pgx.BatchResults) error {
			for i := range ops {
				err := br.QueryRow().Scan(&out[i])
				switch {
				case errors.Is(err, pgx.ErrNoRows):
					out[i] = 0
				case err != nil:
					return err
				}
			}
			return nil
		})
	case len(ops) == 1:
		err = apply(s.pool)
	default:
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return apply(tx) })
	}
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}

// IncrStreak implements [store.Counters].
func (s *Store) IncrStreak(ctx context.Context, key string, at time.Time) (int, error) {
	const op = "incr streak"
	if err := store.CheckKey(key); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return 0, s.fail(ctx, op, err)
	}
	var n int
	err := s.pool.QueryRow(ctx, `INSERT INTO streaks AS st (key, count, last) VALUES ($1, 1, $2)
		ON CONFLICT (key) DO UPDATE SET count = st.count + 1, last = $2
		RETURNING count`, key, ts(at)).Scan(&n)
	if err != nil {
		return 0, s.fail(ctx, op, err)
	}
	return n, nil
}

// ResetStreak implements [store.Counters].
func (s *Store) ResetStreak(ctx context.Context, key string) error {
	const op = "reset streak"
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	_, err := s.pool.Exec(ctx, `DELETE FROM streaks WHERE key = $1`, key)
	return s.fail(ctx, op, err)
}

// GetStreak implements [store.Counters].
func (s *Store) GetStreak(ctx context.Context, key string) (store.Streak, error) {
	const op = "get streak"
	if err := s.enter(ctx); err != nil {
		return store.Streak{}, s.fail(ctx, op, err)
	}
	var (
		st   store.Streak
		last pgtype.Timestamptz
	)
	err := s.pool.QueryRow(ctx, `SELECT count, last FROM streaks WHERE key = $1`, key).Scan(&st.Count, &last)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Streak{}, nil
	case err != nil:
		return store.Streak{}, s.fail(ctx, op, err)
	}
	st.Last = fromTS(last)
	return st, nil
}

var _ store.StreakReader = (*Store)(nil)

// GetStreaks implements [store.StreakReader]: one statement.
func (s *Store) GetStreaks(ctx context.Context, keys []string) ([]store.Streak, error) {
	const op = "get streaks"
	if err := store.CheckStreakKeys(keys); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out := make([]store.Streak, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT key, count, last FROM streaks WHERE key = ANY($1)`, keys)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	defer rows.Close()
	found := make(map[string]store.Streak, len(keys))
	for rows.Next() {
		var (
			key  string
			st   store.Streak
			last pgtype.Timestamptz
		)
		if err := rows.Scan(&key, &st.Count, &last); err != nil {
			return nil, s.fail(ctx, op, err)
		}
		st.Last = fromTS(last)
		found[key] = st
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	for i, k := range keys {
		out[i] = found[k]
	}
	return out, nil
}
