package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

const auditColumns = `seq, time, ticket_id, task, step, session, tool, effect_class, args_digest, args,
	principal_user, principal_agent, principal_delegations, policy_version, decision, reason, taint,
	approver, nonce, card_hash, decision_millis, result, idempotency_key, prev_hash, hash`

func scanAudit(row pgx.Row) (receipt.AuditRecord, error) {
	var (
		r                        receipt.AuditRecord
		digest, prev, hash, args []byte
	)
	err := row.Scan(&r.Seq, &r.Time, &r.TicketID, &r.Task, &r.Step, &r.Session, &r.Tool, &r.EffectClass,
		&digest, &args, &r.Principal.User, &r.Principal.Agent, &r.Principal.Delegations, &r.PolicyVersion,
		&r.Decision, &r.Reason, &r.Taint, &r.Approver, &r.Nonce, &r.CardHash, &r.DecisionMillis, &r.Result,
		&r.IdempotencyKey, &prev, &hash)
	if err != nil {
		return receipt.AuditRecord{}, err
	}
	if args != nil {
		r.Args = json.RawMessage(args)
	}
	copy(r.ArgsDigest[:], digest)
	copy(r.PrevHash[:], prev)
	copy(r.Hash[:], hash)
	return r, nil
}

// The statements of an append. queryHead locks the chain head row, so
// appends from every replica queue there until the appending transaction
// ends; the database's clock is read by the next statement, once the lock
// is held.
const (
	queryHead   = `SELECT seq, hash, time FROM audit_head FOR UPDATE`
	queryClock  = `SELECT clock_timestamp()`
	queryInsert = `INSERT INTO audit (` + auditColumns + `) VALUES
		($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		 $21, $22, $23, $24, $25)`
	queryMoveHead = `UPDATE audit_head SET seq = $1, hash = $2, time = $3`
)

// appendTx appends recs, in order, to the chain inside tx and returns them
// as stored: it locks the head, reads the database's clock, completes each
// record with [store.ChainNext] and writes the records and the new head in
// one round trip. A record the chain refuses fails the whole transaction.
func appendTx(ctx context.Context, tx pgx.Tx, recs ...receipt.AuditRecord) ([]receipt.AuditRecord, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	var (
		head receipt.AuditRecord
		hash []byte
		now  time.Time
	)
	// One round trip; pgx writes to a Batch it sends, so each is new.
	batch := &pgx.Batch{}
	batch.Queue(queryHead)
	batch.Queue(queryClock)
	br := tx.SendBatch(ctx, batch)
	err := br.QueryRow().Scan(&head.Seq, &hash, &head.Time)
	if err == nil {
		err = br.QueryRow().Scan(&now)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	copy(head.Hash[:], hash)
	out := make([]receipt.AuditRecord, len(recs))
	batch = &pgx.Batch{}
	for i, r := range recs {
		next, err := store.ChainNext(head, r, now)
		if err != nil {
			return nil, err
		}
		var args []byte
		if next.Args != nil {
			args = next.Args
		}
		batch.Queue(queryInsert,
			next.Seq, next.Time, next.TicketID, next.Task, next.Step, next.Session, next.Tool, next.EffectClass,
			next.ArgsDigest[:], args, next.Principal.User, next.Principal.Agent, next.Principal.Delegations,
			next.PolicyVersion, next.Decision, next.Reason, next.Taint, next.Approver, next.Nonce, next.CardHash,
			next.DecisionMillis, next.Result, next.IdempotencyKey, next.PrevHash[:], next.Hash[:])
		out[i], head = next, next
	}
	batch.Queue(queryMoveHead, head.Seq, head.Hash[:], head.Time)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, err
	}
	return out, nil
}

// noteTx appends, inside tx, note's record for each ticket in order; a nil
// note appends nothing.
func noteTx(ctx context.Context, tx pgx.Tx, note store.Note, merged bool, tickets ...store.Approval) error {
	if note == nil || len(tickets) == 0 {
		return nil
	}
	recs := make([]receipt.AuditRecord, len(tickets))
	for i, a := range tickets {
		recs[i] = note(a.Clone(), merged)
	}
	_, err := appendTx(ctx, tx, recs...)
	return err
}

// AppendAudit implements [store.AuditLog].
func (s *Store) AppendAudit(ctx context.Context, r receipt.AuditRecord) (receipt.AuditRecord, error) {
	const op = "append audit"
	if err := store.CheckAudit(r); err != nil {
		return receipt.AuditRecord{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return receipt.AuditRecord{}, s.fail(ctx, op, err)
	}
	var out receipt.AuditRecord
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		recs, err := appendTx(ctx, tx, r)
		if err == nil {
			out = recs[0]
		}
		return err
	})
	if err != nil {
		return receipt.AuditRecord{}, s.fail(ctx, op, err)
	}
	return out, nil
}

// AuditHead implements [store.AuditLog].
func (s *Store) AuditHead(ctx context.Context) (receipt.AuditRecord, error) {
	const op = "audit head"
	if err := s.enter(ctx); err != nil {
		return receipt.AuditRecord{}, s.fail(ctx, op, err)
	}
	r, err := scanAudit(s.pool.QueryRow(ctx, `SELECT `+auditColumns+` FROM audit ORDER BY seq DESC LIMIT 1`))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return receipt.AuditRecord{}, nil
	case err != nil:
		return receipt.AuditRecord{}, s.fail(ctx, op, err)
	}
	return r, nil
}

// AuditRange implements [store.AuditLog].
func (s *Store) AuditRange(ctx context.Context, from, to time.Time) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit range", `time >= $1 AND time < $2`, from.UnixMilli(), to.UnixMilli())
}

// AuditSeq implements [store.AuditLog].
func (s *Store) AuditSeq(ctx context.Context, from, to uint64) ([]receipt.AuditRecord, error) {
	// Seq is a bigint: bounds beyond it select nothing more.
	const top = uint64(1<<63 - 1)
	return s.auditWhere(ctx, "audit seq", `seq >= $1 AND seq < $2`, int64(min(from, top)), int64(min(to, top)))
}

// AuditByTask implements [store.AuditLog].
func (s *Store) AuditByTask(ctx context.Context, task string) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit by task", `task = $1`, task)
}

func (s *Store) auditWhere(ctx context.Context, op, where string, args ...any) ([]receipt.AuditRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+auditColumns+` FROM audit WHERE `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (receipt.AuditRecord, error) { return scanAudit(r) })
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}
