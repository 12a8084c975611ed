package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// Consume implements [store.Execution].
func (s *Store) Consume(ctx context.Context, id, key string, at time.Time) (store.Approval, error) {
	if err := store.CheckConsume(key, at); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: consume: %w", err)
	}
	var out store.Approval
	err := s.write(ctx, "consume", func(tx runner) error {
		// Spending the approval and recording the intent (key, time) are
		// this one conditional update.
		n, err := tx.changes(ctx, `UPDATE approvals
			SET state = 'executing', idempotency_key = ?, consumed_at = ?
			WHERE id = ? AND state = 'approved' AND expires_at > ?`, key, at.UnixMicro(), id, at.UnixMicro())
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
		switch out.State {
		case store.Executing, store.Done:
			return store.ErrConsumed
		case store.Approved:
			return store.ErrExpired
		}
		return store.ErrNotApproved
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// Finish implements [store.Execution].
func (s *Store) Finish(ctx context.Context, id string, result []byte, at time.Time) (store.Approval, error) {
	if err := store.CheckFinish(result, at); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: finish: %w", err)
	}
	if result == nil {
		result = []byte{}
	}
	var out store.Approval
	err := s.write(ctx, "finish", func(tx runner) error {
		n, err := tx.changes(ctx, `UPDATE approvals SET state = 'done', result = ?, finished_at = ?
			WHERE id = ? AND state = 'executing'`, result, at.UnixMicro(), id)
		if err != nil {
			return err
		}
		out, err = getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotExecuting
		}
		return nil
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// Recover implements [store.Execution].
func (s *Store) Recover(ctx context.Context) ([]store.Approval, error) {
	if err := s.enter(ctx, "recover"); err != nil {
		return nil, err
	}
	out, err := listApprovals(ctx, s.reader(), `state = 'executing'`, `consumed_at, id`)
	if err != nil {
		return nil, s.fail(ctx, "recover", err)
	}
	return out, nil
}
