package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentstepup/asu/receipt"
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
// of its last (the audit rows and the head's move). Every audit append
// holds the chain head's row lock from the batch that takes it until its
// commit, and appends from all replicas queue on that lock, so the round
// trips made while holding it bound the decisions per second of the whole
// cluster: a decision takes two, the first of which takes the lock as its
// last statement.
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

// head is the chain head a transaction locked and the database's clock
// read once it held the lock.
type head struct {
	last receipt.AuditRecord // Seq, Hash and Time of the newest record
	now  time.Time
	held bool
}

// The statements that lock and read the chain head. queryHead locks the
// head row, so appends from every replica queue there until the appending
// transaction ends; the clock is read by the statement after it, once the
// lock is held.
const (
	queryHead     = `SELECT seq, hash, time FROM audit_head FOR UPDATE`
	queryClock    = `SELECT clock_timestamp()`
	queryMoveHead = `UPDATE audit_head SET seq = $1, hash = $2, time = $3`
	queryAppend   = `INSERT INTO audit (` + auditColumns + `) VALUES
		($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		 $21, $22, $23, $24, $25)`
)

// queueHead queues the head's lock and the clock on b when note will make
// a record; read them with readHead after b's other results.
func queueHead(b *pgx.Batch, note store.Note) {
	if note != nil {
		b.Queue(queryHead)
		b.Queue(queryClock)
	}
}

// readHead reads what queueHead queued.
func readHead(br pgx.BatchResults, note store.Note) (head, error) {
	if note == nil {
		return head{}, nil
	}
	var (
		h    head
		hash []byte
	)
	if err := br.QueryRow().Scan(&h.last.Seq, &hash, &h.last.Time); err != nil {
		return head{}, err
	}
	copy(h.last.Hash[:], hash)
	if err := br.QueryRow().Scan(&h.now); err != nil {
		return head{}, err
	}
	h.held = true
	return h, nil
}

// lockHead locks the head in a round trip of its own, for a transaction
// that did not queue it with its change.
func (t *txn) lockHead(ctx context.Context) (head, error) {
	b := &pgx.Batch{}
	queueHead(b, noNote)
	br := t.send(ctx, b)
	h, err := readHead(br, noNote)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return h, err
}

// lockHeadFor locks the head when note will make a record.
func (t *txn) lockHeadFor(ctx context.Context, note store.Note) (head, error) {
	if note == nil {
		return head{}, nil
	}
	return t.lockHead(ctx)
}

// noNote stands for a note when one is needed only to say "queue the head".
var noNote store.Note = func(store.Approval, bool) receipt.AuditRecord { return receipt.AuditRecord{} }

// commit appends recs after h (which the transaction holds when recs is
// not empty), moves the head and commits, in one round trip. It returns
// the records as stored. A record the chain refuses fails the transaction
// before anything is sent.
func (t *txn) commit(ctx context.Context, h head, recs ...receipt.AuditRecord) ([]receipt.AuditRecord, error) {
	b := &pgx.Batch{}
	out := make([]receipt.AuditRecord, len(recs))
	if len(recs) > 0 {
		if !h.held {
			return nil, errors.New("postgres: append without the chain head")
		}
		last := h.last
		for i, r := range recs {
			next, err := store.ChainNext(last, r, h.now)
			if err != nil {
				return nil, err
			}
			var args []byte
			if next.Args != nil {
				args = next.Args
			}
			b.Queue(queryAppend,
				next.Seq, next.Time, next.TicketID, next.Task, next.Step, next.Session, next.Tool, next.EffectClass,
				next.ArgsDigest[:], args, next.Principal.User, next.Principal.Agent, next.Principal.Delegations,
				next.PolicyVersion, next.Decision, next.Reason, next.Taint, next.Approver, next.Nonce, next.CardHash,
				next.DecisionMillis, next.Result, next.IdempotencyKey, next.PrevHash[:], next.Hash[:])
			out[i], last = next, next
		}
		b.Queue(queryMoveHead, last.Seq, last.Hash[:], last.Time)
	}
	b.Queue("COMMIT")
	if err := t.send(ctx, b).Close(); err != nil {
		return nil, err
	}
	t.closed = true
	return out, nil
}

// commitNoted commits with note's record for each ticket, in order; a nil
// note commits with no record.
func (t *txn) commitNoted(ctx context.Context, h head, note store.Note, merged bool, tickets ...store.Approval) error {
	var recs []receipt.AuditRecord
	if note != nil {
		recs = make([]receipt.AuditRecord, len(tickets))
		for i, a := range tickets {
			recs[i] = note(a.Clone(), merged)
		}
	}
	_, err := t.commit(ctx, h, recs...)
	return err
}
