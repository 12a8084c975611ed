package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

// AddCount implements [store.Counters]. A key's row holds its two newest
// windows (w1 older, or NULL; w2 newest).
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

// errPrunedRow is a batch of counts that met a prune of one of its keys:
// it is made again (AddCounts).
var errPrunedRow = errors.New("a counter's row was pruned while it was locked")

// pruneRetries bounds how often a batch of counts is made again after
// meeting a prune.
const pruneRetries = 4

// lockCounters makes a placeholder row for each of keys that has none and
// locks them all, in key order and one round trip that also sets the
// transaction's commit not to wait for the WAL, and adds each key's
// windows to kept.
func lockCounters(ctx context.Context, t *txn, keys []string, kept map[string][]store.CountWindow) error {
	b := &pgx.Batch{}
	b.Queue(queryNoFlush)
	b.Queue(queryMakeCounters, keys)
	b.Queue(queryLockCounters, keys)
	br := t.send(ctx, b)
	err := func() error {
		for range len(b.QueuedQueries) - 1 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				key    string
				w1, w2 pgtype.Timestamptz
				n1, n2 int64
			)
			if err := rows.Scan(&key, &w1, &n1, &w2, &n2); err != nil {
				return err
			}
			var ws []store.CountWindow
			if w1.Valid && w1.InfinityModifier == pgtype.Finite && n1 != 0 {
				ws = append(ws, store.CountWindow{Start: w1.Time, N: n1})
			}
			if w2.Valid && w2.InfinityModifier == pgtype.Finite && n2 != 0 {
				ws = append(ws, store.CountWindow{Start: w2.Time, N: n2})
			}
			kept[key] = ws
		}
		return rows.Err()
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// queryReadCount reads a window and makes none. queryLockCounters makes
// a placeholder row (no window, w2 at -infinity with n2 0) for every key
// that has none, so that every key can be locked, and locks them, in key
// order so that concurrent batches queue instead of deadlocking.
const (
	queryReadCount    = `SELECT CASE WHEN w2 = $2 THEN n2 WHEN w1 = $2 THEN n1 ELSE 0 END FROM counters WHERE key = $1`
	queryMakeCounters = `INSERT INTO counters (key, w1, n1, w2, n2)
		SELECT k, NULL, 0, '-infinity', 0 FROM unnest($1::text[]) AS k ORDER BY k
		ON CONFLICT (key) DO NOTHING`
	queryLockCounters = `SELECT key, w1, n1, w2, n2 FROM counters WHERE key = ANY($1) ORDER BY key FOR UPDATE`
	queryPutCounter   = `UPDATE counters SET w1 = $2, n1 = $3, w2 = $4, n2 = $5 WHERE key = $1`
	queryDropCounter  = `DELETE FROM counters WHERE key = $1`
)

// AddCounts implements [store.Counters]: reads alone as one statement or
// one transaction of them; with any add, a transaction that does not wait
// for the WAL (see Durability in the package doc) and takes two round
// trips: one locks the rows of the batch's keys, the other writes what
// [store.ApplyCount] made of them and commits.
func (s *Store) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	const op = "add count"
	if err := store.CheckCountOps(ops); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out := make([]int64, len(ops))
	reads := true
	for _, c := range ops {
		reads = reads && c.Delta == 0
	}
	read := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) error {
		for i, c := range ops {
			err := q.QueryRow(ctx, queryReadCount, c.Key, c.Window).Scan(&out[i])
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				out[i] = 0
			case err != nil:
				return err
			}
		}
		return nil
	}
	var err error
	switch {
	case !reads:
		for range pruneRetries {
			err = s.inTxn(ctx, func(t *txn) error { return addCounts(ctx, t, ops, out) })
			if !errors.Is(err, errPrunedRow) {
				break
			}
		}
	case len(ops) == 1:
		err = read(s.pool)
	default:
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return read(tx) })
	}
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}

// addCounts applies ops in t, with the windows of their keys read and
// locked first, and commits.
func addCounts(ctx context.Context, t *txn, ops []store.CountOp, out []int64) error {
	keys := make([]string, 0, len(ops))
	for _, c := range ops {
		keys = append(keys, c.Key)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	kept := make(map[string][]store.CountWindow, len(keys))
	if err := lockCounters(ctx, t, keys, kept); err != nil {
		return err
	}
	if len(kept) < len(keys) {
		// A key pruned (Store.PruneCounts) between its placeholder's
		// insert, which found the row, and the lock, which then did not:
		// the transaction is rolled back and made again, every key locked
		// in order as before, so its count is never lost with the row.
		return errPrunedRow
	}
	for i, c := range ops {
		ws := kept[c.Key]
		if c.Delta == 0 {
			out[i] = 0
			for _, w := range ws {
				if w.Start.Equal(c.Window) {
					out[i] = w.N
				}
			}
			continue
		}
		kept[c.Key], out[i] = store.ApplyCount(ws, c.Window, c.Delta)
	}
	b := &pgx.Batch{}
	for _, key := range keys {
		switch ws := kept[key]; len(ws) {
		case 0:
			b.Queue(queryDropCounter, key)
		case 1:
			b.Queue(queryPutCounter, key, nil, 0, ws[0].Start, ws[0].N)
		default:
			b.Queue(queryPutCounter, key, ws[0].Start, ws[0].N, ws[1].Start, ws[1].N)
		}
	}
	b.Queue("COMMIT")
	br := t.send(ctx, b)
	var err error
	for range b.QueuedQueries {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if err == nil {
		t.closed = true
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		t.closed = false
		err = cerr
	}
	return err
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
		ON CONFLICT (key) DO UPDATE SET count = st.count + 1, last = GREATEST(st.last, $2)
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

// queryPruneCounters deletes up to $3 keys starting with $1 whose newest
// window started before $2, skipping rows a batch of counts holds.
// starts_with compares bytes, whatever the column's collation.
const queryPruneCounters = `DELETE FROM counters WHERE key IN (
		SELECT key FROM counters WHERE starts_with(key, $1) AND w2 < $2
		LIMIT $3 FOR UPDATE SKIP LOCKED)`

// PruneCounts implements [store.CountPruner], in one statement whose
// commit does not wait for the WAL: a prune lost to a crash is made again
// by the next.
func (s *Store) PruneCounts(ctx context.Context, prefix string, before time.Time, limit int) (int, error) {
	const op = "prune counts"
	limit, err := store.CheckPrune(prefix, before, limit)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return 0, s.fail(ctx, op, err)
	}
	var n int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, queryNoFlush); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, queryPruneCounters, prefix, before, limit)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, s.fail(ctx, op, err)
	}
	return int(n), nil
}
