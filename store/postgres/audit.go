package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

const auditColumns = `seq, time, ticket_id, task, step, session, tool, effect_class, args_digest, args,
	principal_user, principal_agent, principal_delegations, policy_version, decision, reason, taint,
	approver, nonce, card_hash, decision_millis, result, idempotency_key, prev_hash, hash`

func scanAudit(row pgx.Row) (audit.Record, error) {
	var (
		r                        audit.Record
		digest, prev, hash, args []byte
	)
	err := row.Scan(&r.Seq, &r.Time, &r.TicketID, &r.Task, &r.Step, &r.Session, &r.Tool, &r.EffectClass,
		&digest, &args, &r.Principal.User, &r.Principal.Agent, &r.Principal.Delegations, &r.PolicyVersion,
		&r.Decision, &r.Reason, &r.Taint, &r.Approver, &r.Nonce, &r.CardHash, &r.DecisionMillis, &r.Result,
		&r.IdempotencyKey, &prev, &hash)
	if err != nil {
		return audit.Record{}, err
	}
	if args != nil {
		r.Args = json.RawMessage(args)
	}
	copy(r.ArgsDigest[:], digest)
	copy(r.PrevHash[:], prev)
	copy(r.Hash[:], hash)
	return r, nil
}

// AppendAudit implements [store.AuditLog] in one round trip: BEGIN, the
// statement that locks the head, chains, hashes and inserts the record and
// moves the head (see queryAppend), and COMMIT.
func (s *Store) AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error) {
	const op = "append audit"
	if err := store.CheckAudit(r); err != nil {
		return audit.Record{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return audit.Record{}, s.fail(ctx, op, err)
	}
	var out audit.Record
	err := s.inTxn(ctx, func(t *txn) error {
		recs, err := t.commit(ctx, r)
		if err == nil {
			out = recs[0]
		}
		return err
	})
	if err != nil {
		return audit.Record{}, s.fail(ctx, op, err)
	}
	return out, nil
}

// AuditHead implements [store.AuditLog].
func (s *Store) AuditHead(ctx context.Context) (audit.Record, error) {
	const op = "audit head"
	if err := s.enterRead(ctx); err != nil {
		return audit.Record{}, s.fail(ctx, op, err)
	}
	r, err := scanAudit(s.pool.QueryRow(ctx, `SELECT `+auditColumns+` FROM audit ORDER BY seq DESC LIMIT 1`))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return audit.Record{}, nil
	case err != nil:
		return audit.Record{}, s.fail(ctx, op, err)
	}
	if err := store.CheckHead(r, nil, r.Seq); err != nil {
		return audit.Record{}, s.fail(ctx, op, err)
	}
	return r, nil
}

// AuditRange implements [store.AuditLog].
func (s *Store) AuditRange(ctx context.Context, from, to time.Time) ([]audit.Record, error) {
	return s.auditWhere(ctx, "audit range", `time >= $1 AND time < $2`, from.UnixMilli(), to.UnixMilli())
}

// AuditSeq implements [store.AuditLog].
func (s *Store) AuditSeq(ctx context.Context, from, to uint64) ([]audit.Record, error) {
	// Seq is a bigint: bounds beyond it select nothing more.
	const top = uint64(1<<63 - 1)
	return s.auditWhere(ctx, "audit seq", `seq >= $1 AND seq < $2`, int64(min(from, top)), int64(min(to, top)))
}

// AuditByTask implements [store.AuditLog].
func (s *Store) AuditByTask(ctx context.Context, task string) ([]audit.Record, error) {
	return s.auditWhere(ctx, "audit by task", `task = $1`, task)
}

func (s *Store) auditWhere(ctx context.Context, op, where string, args ...any) ([]audit.Record, error) {
	if err := s.enterRead(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+auditColumns+` FROM audit WHERE `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.Record, error) { return scanAudit(r) })
	if err == nil {
		err = store.CheckRead(out)
	}
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}
