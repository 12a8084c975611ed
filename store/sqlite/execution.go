package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// Consume implements [store.Execution].
func (s *Store) Consume(ctx context.Context, id string, c store.Claim, note store.Note) (store.Approval, error) {
	if err := store.CheckConsume(c); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: consume: %w", err)
	}
	var out store.Approval
	err := s.write(ctx, "consume", func(tx runner) error {
		cur, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := s.skew(c.At); err != nil {
			return err
		}
		// Spending the approval and recording the intent (key, owner,
		// lease) are this one conditional update.
		n, err := tx.changes(ctx, `UPDATE approvals
			SET state = 'executing', idempotency_key = ?, consumed_at = ?, owner = ?, fence = 1, lease_until = ?
			WHERE id = ? AND state = 'approved' AND expires_at > ?`,
			c.Key, c.At.UnixMicro(), c.Owner, c.LeaseUntil.UnixMicro(), id, c.At.UnixMicro())
		if err != nil {
			return err
		}
		if n == 1 {
			out, err = s.ticketNote(ctx, tx, id, note, false)
			return err
		}
		switch {
		case cur.State == store.Executing || cur.State.Ran():
			return store.ErrConsumed
		case cur.State == store.Revoked:
			return store.ErrRevoked
		case cur.State == store.Approved:
			return store.ErrExpired
		}
		return store.ErrNotApproved
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// Renew implements [store.Execution].
func (s *Store) Renew(ctx context.Context, id, owner string, fence int64, until time.Time) error {
	if err := store.CheckLease(owner, fence, until); err != nil {
		return fmt.Errorf("sqlite: renew: %w", err)
	}
	return s.write(ctx, "renew", func(tx runner) error {
		n, err := tx.changes(ctx, `UPDATE approvals SET lease_until = ?
			WHERE id = ? AND state = 'executing' AND owner = ? AND fence = ?`, until.UnixMicro(), id, owner, fence)
		if err != nil || n == 1 {
			return err
		}
		return s.fenced(ctx, tx, id)
	})
}

// fenced returns store.ErrNotFound for an unknown id and store.ErrFenced
// otherwise: the explanation of a fenced update that changed nothing.
func (s *Store) fenced(ctx context.Context, tx runner, id string) error {
	if _, err := getApproval(ctx, tx, id); err != nil {
		return err
	}
	return store.ErrFenced
}

// Finish implements [store.Execution].
func (s *Store) Finish(ctx context.Context, id string, fence int64, o store.Outcome, note store.Note) (store.Approval, error) {
	if err := o.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: finish: %w", err)
	}
	result := o.Result
	if result == nil {
		result = []byte{}
	}
	var out store.Approval
	err := s.write(ctx, "finish", func(tx runner) error {
		n, err := tx.changes(ctx, `UPDATE approvals SET state = ?, result = ?, finished_at = ?
			WHERE id = ? AND state = 'executing' AND fence = ?`, o.State, result, o.At.UnixMicro(), id, fence)
		if err != nil {
			return err
		}
		if n == 0 {
			return s.fenced(ctx, tx, id)
		}
		out, err = s.ticketNote(ctx, tx, id, note, false)
		return err
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// Expired implements [store.Execution].
func (s *Store) Expired(ctx context.Context, at time.Time, limit int) ([]store.Approval, error) {
	if limit < 0 {
		return nil, fmt.Errorf("sqlite: expired: %w: negative limit", store.ErrInvalid)
	}
	if err := s.enterRead(ctx, "expired"); err != nil {
		return nil, err
	}
	out, err := listApprovals(ctx, s.reader(), `state = 'executing' AND lease_until <= ?
		ORDER BY lease_until, id LIMIT ?`, ``, at.UnixMicro(), store.Filter{Limit: limit}.PageSize())
	if err != nil {
		return nil, s.fail(ctx, "expired", err)
	}
	return out, nil
}

// Reclaim implements [store.Execution].
func (s *Store) Reclaim(ctx context.Context, id string, fence int64, c store.Claim, note store.Note) (store.Approval, error) {
	if err := c.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: reclaim: %w", err)
	}
	var out store.Approval
	err := s.write(ctx, "reclaim", func(tx runner) error {
		cur, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := s.skew(c.At); err != nil {
			return err
		}
		switch {
		case cur.State != store.Executing || cur.Fence != fence:
			return store.ErrFenced
		case c.Key != "" && c.Key != cur.IdempotencyKey:
			return fmt.Errorf("%w: the idempotency key never changes", store.ErrInvalid)
		case cur.LeaseUntil.After(c.At):
			return store.ErrLeaseLive
		}
		// The write lock is held since BEGIN IMMEDIATE, so the row read
		// above is the row updated here; the update still names the fence.
		n, err := tx.changes(ctx, `UPDATE approvals SET owner = ?, fence = fence + 1, lease_until = ?
			WHERE id = ? AND state = 'executing' AND fence = ?`, c.Owner, c.LeaseUntil.UnixMicro(), id, fence)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrFenced
		}
		out, err = s.ticketNote(ctx, tx, id, note, false)
		return err
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}
