package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// querier runs statements: a transaction's connection.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// txn is one transaction on a pooled connection whose BEGIN travels in
// the batch of its first statements and whose COMMIT travels in the batch
// of its last, the audit appends: a decision is two round trips, and the
// chain head is locked only by the second, from its appends to its commit.
type txn struct {
	conn   *pgxpool.Conn
	begun  bool
	closed bool // committed
}

var _ querier = (*pgxpool.Conn)(nil)

// errNotCommitted is returned when a transaction function returns without
// committing; it is a bug in this package.
var errNotCommitted = errors.New("postgres: transaction not committed")

// inTxn runs fn in a new transaction and rolls it back unless fn
// committed it. A connection whose rollback fails is not reused: the pool
// drops a connection that is not idle, and the server then rolls back.
func (s *Store) inTxn(ctx context.Context, fn func(*txn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	t := &txn{conn: c}
	err = fn(t)
	if t.begun && !t.closed {
		if ctx.Err() == nil {
			_, _ = c.Exec(ctx, "ROLLBACK")
		}
		if err == nil {
			err = errNotCommitted
		}
	}
	return err
}

// send sends b, after BEGIN when it is the transaction's first batch, and
// returns the results of b's statements.
func (t *txn) send(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.begun {
		return t.conn.SendBatch(ctx, b)
	}
	t.begun = true
	withBegin := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+1)}
	withBegin.Queue("BEGIN")
	withBegin.QueuedQueries = append(withBegin.QueuedQueries, b.QueuedQueries...)
	br := t.conn.SendBatch(ctx, withBegin)
	if _, err := br.Exec(); err != nil {
		return failedBatch{BatchResults: br, err: err}
	}
	return br
}

// failedBatch is the results of a batch whose BEGIN failed: every result
// is that failure.
type failedBatch struct {
	pgx.BatchResults
	err error
}

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return errRow{f.err} }
func (f failedBatch) Close() error {
	_ = f.BatchResults.Close()
	return f.err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// querySkipPlanning lets the appends that follow it in a transaction run
// their cached generic plan. The store's connections plan every statement
// for its arguments (plan_cache_mode force_custom_plan, see Open), which
// keeps ticket lookups on their indexes whatever the table held when a
// plan was first made; an append reads the one head row and inserts, so
// its plan never depends on the data, and planning it each time would
// cost more than running it.
const querySkipPlanning = `SET LOCAL plan_cache_mode = force_generic_plan`

// queryLockHead takes the chain head's row lock in a statement of its
// own, in the same batch as the appends that follow: each append's
// statement then starts, and takes its snapshot, after the head is
// locked, so the check of the head's row (see queryAppend) sees the row
// the transaction that held the lock before committed.
const queryLockHead = `SELECT 1 FROM audit_head FOR UPDATE`

// commit appends recs, in order, and commits, in one round trip, and
// returns the records as stored. A record the chain refuses fails the
// transaction before anything is sent.
func (t *txn) commit(ctx context.Context, recs ...audit.Record) ([]audit.Record, error) {
	b := &pgx.Batch{}
	if len(recs) > 0 {
		b.Queue(querySkipPlanning)
		b.Queue(queryLockHead)
	}
	reads := make([]func(pgx.BatchResults) (audit.Record, error), len(recs))
	for i, r := range recs {
		read, err := queueAppend(b, r)
		if err != nil {
			return nil, err
		}
		reads[i] = read
	}
	b.Queue("COMMIT")
	br := t.send(ctx, b)
	if len(recs) > 0 {
		for range 2 { // querySkipPlanning, queryLockHead
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				return nil, err
			}
		}
	}
	out := make([]audit.Record, len(recs))
	for i, read := range reads {
		r, err := read(br)
		if err != nil {
			_ = br.Close()
			return nil, err
		}
		out[i] = r
	}
	if err := br.Close(); err != nil {
		return nil, err
	}
	t.closed = true
	return out, nil
}

// commitNoted commits with note's record for each ticket, in order; a nil
// note commits with no record.
func (t *txn) commitNoted(ctx context.Context, note store.Note, merged bool, tickets ...store.Approval) error {
	var recs []audit.Record
	if note != nil {
		recs = make([]audit.Record, len(tickets))
		for i, a := range tickets {
			recs[i] = note(a.Clone(), merged)
		}
	}
	_, err := t.commit(ctx, recs...)
	return err
}

// queryNoFlush lets the transaction it starts commit without waiting for
// its WAL to be flushed (or sent to a synchronous standby): the
// transaction's record becomes durable with the next commit that waits,
// which flushes the WAL up to its own record and so every record before
// it. SET LOCAL ends with the transaction, so the connection goes back
// to the pool with the server's setting.
const queryNoFlush = `SET LOCAL synchronous_commit = off`

// relaxed runs the statements queue adds in a transaction that does not
// wait for the WAL (queryNoFlush): BEGIN, the setting, the statements and
// COMMIT travel in one batch, one round trip like a statement alone. read
// reads the statements' results, in order. The COMMIT is sent with the
// statements, so the server commits what they wrote even when read
// fails on the client's side: an error read returns is reported, but is
// no rollback. Only the writes that decide nothing use it, Show,
// AddCounts and an approval answer's sign count (see Durability in the
// package doc), for which a write kept in spite of an error is harmless:
// a showing or a count the caller retries counts as the same showing, or
// one more count, and a counter kept higher only refuses the same answer
// again, as it would be refused anyway.
func (s *Store) relaxed(ctx context.Context, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	return s.inTxn(ctx, func(t *txn) error {
		b := &pgx.Batch{}
		b.Queue(queryNoFlush)
		queue(b)
		b.Queue("COMMIT")
		br := t.send(ctx, b)
		_, err := br.Exec()
		if err == nil {
			err = read(br)
		}
		if err == nil || errNoRow(err) {
			if _, cerr := br.Exec(); cerr != nil {
				err = cerr
			} else {
				t.closed = true
			}
		}
		if cerr := br.Close(); err == nil && cerr != nil {
			t.closed = false
			err = cerr
		}
		return err
	})
}

// relaxedOne is relaxed for one statement.
func (s *Store) relaxedOne(ctx context.Context, read func(pgx.BatchResults) error, query string, args ...any) error {
	return s.relaxed(ctx, func(b *pgx.Batch) { b.Queue(query, args...) }, read)
}
