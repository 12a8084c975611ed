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

// AppendAudit implements [store.AuditLog]. The transaction locks the chain
// head row with SELECT ... FOR UPDATE, so appends from every replica queue
// there; the next one reads the head this one leaves and chains to it.
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
		var (
			head receipt.AuditRecord
			hash []byte
		)
		if err := tx.QueryRow(ctx, `SELECT seq, hash FROM audit_head FOR UPDATE`).Scan(&head.Seq, &hash); err != nil {
			return err
		}
		copy(head.Hash[:], hash)
		next, err := store.ChainNext(head, r)
		if err != nil {
			return err
		}
		var args []byte
		if next.Args != nil {
			args = next.Args
		}
		if _, err := tx.Exec(ctx, `INSERT INTO audit (`+auditColumns+`) VALUES
			($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
			 $21, $22, $23, $24, $25)`,
			next.Seq, next.Time, next.TicketID, next.Task, next.Step, next.Session, next.Tool, next.EffectClass,
			next.ArgsDigest[:], args, next.Principal.User, next.Principal.Agent, next.Principal.Delegations,
			next.PolicyVersion, next.Decision, next.Reason, next.Taint, next.Approver, next.Nonce, next.CardHash,
			next.DecisionMillis, next.Result, next.IdempotencyKey, next.PrevHash[:], next.Hash[:]); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE audit_head SET seq = $1, hash = $2`, next.Seq, next.Hash[:]); err != nil {
			return err
		}
		out = next
		return nil
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
