package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// queryMerge finds the live pending duplicate of a ticket, through the
// approvals_pending_session index.
const queryMerge = `SELECT id FROM approvals
	WHERE state = 'pending' AND session = ? AND digest = ? AND expires_at > ?
	ORDER BY created_at, id LIMIT 1`

// queryCap counts up to limit live pending tickets of one session or user,
// through the approvals_pending_session or approvals_pending_user index.
func queryCap(column string) string {
	return `SELECT count(*) FROM (SELECT 1 FROM approvals
	WHERE state = 'pending' AND ` + column + ` = ? AND expires_at > ? LIMIT ?)`
}

// Park implements [store.Tickets].
func (s *Store) Park(ctx context.Context, a store.Approval, caps store.Caps) (store.Approval, bool, error) {
	if err := a.Check(); err != nil {
		return store.Approval{}, false, fmt.Errorf("sqlite: park: %w", err)
	}
	if a.ID == "" {
		a.ID = store.NewID()
	}
	a.State = store.Pending
	var out store.Approval
	merged := false
	err := s.write(ctx, "park", func(tx runner) error {
		now := a.CreatedAt.UnixMicro()
		var id string
		err := tx.QueryRowContext(ctx, queryMerge, a.Session, a.Digest[:], now).Scan(&id)
		switch {
		case err == nil:
			if _, err := tx.ExecContext(ctx, `UPDATE approvals SET merged = merged + 1 WHERE id = ?`, id); err != nil {
				return dbErr(err)
			}
			merged = true
			out, err = getApproval(ctx, tx, id)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return dbErr(err)
		}
		if err := checkCap(ctx, tx, "session", a.Session, now, caps.PerSession); err != nil {
			return err
		}
		if err := checkCap(ctx, tx, "user", a.User, now, caps.PerUser); err != nil {
			return err
		}
		if err := insertApproval(ctx, tx, a); err != nil {
			return err
		}
		out, err = getApproval(ctx, tx, a.ID) // as stored: times to the microsecond
		return err
	})
	if err != nil {
		return store.Approval{}, false, err
	}
	return out, merged, nil
}

// insertApproval inserts the new pending ticket a, or fails with
// store.ErrDuplicate when its id is taken.
func insertApproval(ctx context.Context, tx runner, a store.Approval) error {
	requester, err := json.Marshal(a.Requester)
	if err != nil {
		return fmt.Errorf("%w: requester", store.ErrInvalid)
	}
	taint, err := json.Marshal(a.Taint)
	if err != nil {
		return fmt.Errorf("%w: taint", store.ErrInvalid)
	}
	n, err := tx.changes(ctx, `INSERT INTO approvals (id, state, effect, digest, tool, effect_class,
		card, card_hash, nonce, created_at, expires_at, requester, user, session, task, step,
		policy_version, taint, rationale) VALUES (`+placeholders(19)+`) ON CONFLICT (id) DO NOTHING`,
		a.ID, store.Pending, a.Effect, a.Digest[:], a.Tool, a.EffectClass, a.Card, a.CardHash[:], a.Nonce[:],
		a.CreatedAt.UnixMicro(), a.ExpiresAt.UnixMicro(), string(requester), a.User, a.Session, a.Task, a.Step,
		a.PolicyVersion, string(taint), a.Rationale)
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrDuplicate
	}
	return nil
}

// checkCap fails with store.ErrPendingCap when column (session or user)
// already has limit live pending tickets. It reads at most limit index
// entries, whatever the number of tickets.
func checkCap(ctx context.Context, tx runner, column, value string, now int64, limit int) error {
	if limit <= 0 {
		return nil
	}
	var n int
	err := tx.QueryRowContext(ctx, queryCap(column), value, now, limit).Scan(&n)
	if err != nil {
		return dbErr(err)
	}
	if n >= limit {
		return fmt.Errorf("%s: %w", column, store.ErrPendingCap)
	}
	return nil
}

// Get implements [store.Tickets].
func (s *Store) Get(ctx context.Context, id string) (store.Approval, error) {
	if err := s.enter(ctx, "get ticket"); err != nil {
		return store.Approval{}, err
	}
	a, err := getApproval(ctx, s.reader(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Approval{}, fmt.Errorf("sqlite: get ticket: %w", err)
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, "get ticket", err)
	}
	return a, nil
}

// Resolve implements [store.Tickets].
func (s *Store) Resolve(ctx context.Context, id string, r store.Resolution) (store.Approval, error) {
	if err := r.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: resolve: %w", err)
	}
	var out store.Approval
	err := s.write(ctx, "resolve", func(tx runner) error {
		// The approve-before-expiry condition is part of the update, so the
		// check and the change are one statement.
		n, err := tx.changes(ctx, `UPDATE approvals
			SET state = ?, approver = ?, reason = ?, evidence = ?, resolved_at = ?
			WHERE id = ? AND state = 'pending' AND (? <> 'approved' OR expires_at > ?)`,
			r.To, r.Approver, r.Reason, r.Evidence, r.At.UnixMicro(), id, r.To, r.At.UnixMicro())
		if err != nil {
			return err
		}
		out, err = getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		if out.State != store.Pending {
			return store.ErrResolved
		}
		return store.ErrExpired
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// ExpirePending implements [store.Tickets].
func (s *Store) ExpirePending(ctx context.Context, now time.Time) ([]store.Approval, error) {
	var out []store.Approval
	err := s.write(ctx, "expire pending", func(tx runner) error {
		var err error
		out, err = listApprovals(ctx, tx, `state = 'pending' AND expires_at <= ?`, `expires_at, id`, now.UnixMicro())
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE approvals SET state = 'expired', resolved_at = ?
			WHERE state = 'pending' AND expires_at <= ?`, now.UnixMicro(), now.UnixMicro())
		return dbErr(err)
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].State = store.Expired
		out[i].ResolvedAt = time.UnixMicro(now.UnixMicro()).UTC()
	}
	return out, nil
}

// Pending implements [store.Tickets].
func (s *Store) Pending(ctx context.Context, f store.Filter) ([]store.Approval, error) {
	if err := s.enter(ctx, "pending"); err != nil {
		return nil, err
	}
	where, args := `state = 'pending'`, []any{}
	if f.Session != "" {
		where += ` AND session = ?`
		args = append(args, f.Session)
	}
	if f.User != "" {
		where += ` AND user = ?`
		args = append(args, f.User)
	}
	out, err := listApprovals(ctx, s.reader(), where, `created_at, id`, args...)
	if err != nil {
		return nil, s.fail(ctx, "pending", err)
	}
	return out, nil
}
