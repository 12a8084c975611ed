package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/store"
)

// Consume implements [store.Execution] with one statement: the UPDATE that
// spends the approval is the one that records the intent (idempotency key
// and time), so there is no moment at which one is stored without the
// other. Concurrent callers queue on the row lock; PostgreSQL re-checks
// the WHERE clause against the row the winner left, so every other caller
// matches nothing.
func (s *Store) Consume(ctx context.Context, id, key string, at time.Time) (store.Approval, error) {
	const op = "consume"
	if err := store.CheckConsume(key, at); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	a, err := scanTicket(s.pool.QueryRow(ctx, `UPDATE tickets
		SET state = 'executing', idempotency_key = $2, consumed_at = $3
		WHERE id = $1 AND state = 'approved' AND expires_at > $3
		RETURNING `+ticketColumns, id, key, at))
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.whyNot(ctx, id, func(state store.State, _ time.Time) error {
			switch state {
			case store.Executing, store.Done:
				return store.ErrConsumed
			case store.Approved:
				return store.ErrExpired
			}
			return store.ErrNotApproved
		})
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	return a, nil
}

// Finish implements [store.Execution].
func (s *Store) Finish(ctx context.Context, id string, result []byte, at time.Time) (store.Approval, error) {
	const op = "finish"
	if err := store.CheckFinish(result, at); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	a, err := scanTicket(s.pool.QueryRow(ctx, `UPDATE tickets SET state = 'done', result = $2, finished_at = $3
		WHERE id = $1 AND state = 'executing'
		RETURNING `+ticketColumns, id, result, at))
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.whyNot(ctx, id, func(store.State, time.Time) error { return store.ErrNotExecuting })
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	return a, nil
}

// Recover implements [store.Execution].
func (s *Store) Recover(ctx context.Context) ([]store.Approval, error) {
	const op = "recover"
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+ticketColumns+` FROM tickets
		WHERE state = 'executing' ORDER BY consumed_at, id`)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := collectTickets(rows)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}
