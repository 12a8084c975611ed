package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/store"
)

// The statements of execution. Each is one conditional UPDATE: concurrent
// callers queue on the row lock, and PostgreSQL re-checks the WHERE clause
// against the row the winner left, so every other caller matches nothing.
// The deciding ones compare the caller's time with the database's clock
// in the same statement.
var (
	// queryConsume spends the approval and records the intent (key,
	// owner, fence 1, lease, time) in the same statement, so there is no
	// moment at which one is stored without the other.
	queryConsume = `UPDATE tickets
		SET state = 'executing', idempotency_key = $2, owner = $3, fence = 1, lease_until = $4, consumed_at = $5
		WHERE id = $1 AND state = 'approved' AND expires_at > $5 AND ` + skewOK(5) + `
		RETURNING ` + ticketColumns
	queryRenew = `UPDATE tickets SET lease_until = $4
		WHERE id = $1 AND state = 'executing' AND owner = $2 AND fence = $3`
	queryFinish = `UPDATE tickets SET state = $3, result = $4, finished_at = $5
		WHERE id = $1 AND state = 'executing' AND fence = $2
		RETURNING ` + ticketColumns
	// queryReclaim takes over only an expired lease ($5 is now) held under
	// the fence the caller read, and leaves the idempotency key alone.
	queryReclaim = `UPDATE tickets SET owner = $3, fence = fence + 1, lease_until = $4
		WHERE id = $1 AND state = 'executing' AND fence = $2 AND lease_until <= $5
		AND ($6 = '' OR idempotency_key = $6) AND ` + skewOK(5) + `
		RETURNING ` + ticketColumns
	queryExpired = `SELECT ` + ticketColumns + ` FROM tickets
		WHERE state = 'executing' AND lease_until <= $1 ORDER BY lease_until, id LIMIT $2`
)

// Consume implements [store.Execution].
func (s *Store) Consume(ctx context.Context, id string, c store.Claim, note store.Note) (store.Approval, error) {
	const op = "consume"
	if err := store.CheckConsume(c); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	return s.decide(ctx, op, note, queryConsume, []any{id, c.Key, c.Owner, c.LeaseUntil, c.At}, func(q querier) error {
		st, err := explainTicket(ctx, q, id)
		switch {
		case err != nil:
			return err
		case !st.found:
			return store.ErrNotFound
		}
		if err := store.CheckSkew(c.At, st.now); err != nil {
			return err
		}
		switch {
		case st.state == store.Executing || st.state.Ran():
			return store.ErrConsumed
		case st.state == store.Revoked:
			return store.ErrRevoked
		case st.state == store.Approved:
			return store.ErrExpired
		}
		return store.ErrNotApproved
	})
}

// Renew implements [store.Execution].
func (s *Store) Renew(ctx context.Context, id, owner string, fence int64, until time.Time) error {
	const op = "renew"
	if err := store.CheckLease(owner, fence, until); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	tag, err := s.pool.Exec(ctx, queryRenew, id, owner, fence, until)
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tickets WHERE id = $1)`, id).Scan(&exists); err != nil {
		return s.fail(ctx, op, err)
	}
	if !exists {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", op, store.ErrFenced)
}

// Finish implements [store.Execution].
func (s *Store) Finish(ctx context.Context, id string, fence int64, o store.Outcome, note store.Note) (store.Approval, error) {
	const op = "finish"
	if err := o.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	return s.decide(ctx, op, note, queryFinish, []any{id, fence, string(o.State), o.Result, o.At}, func(q querier) error {
		st, err := explainTicket(ctx, q, id)
		switch {
		case err != nil:
			return err
		case !st.found:
			return store.ErrNotFound
		}
		return store.ErrFenced
	})
}

// Expired implements [store.Execution].
func (s *Store) Expired(ctx context.Context, at time.Time, limit int) ([]store.Approval, error) {
	const op = "expired"
	if err := store.CheckTime(at); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if limit < 0 {
		return nil, fmt.Errorf("%s: %w: negative limit", op, store.ErrInvalid)
	}
	if err := s.enterRead(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	rows, err := s.pool.Query(ctx, queryExpired, at, store.Filter{Limit: limit}.PageSize())
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := collectTickets(rows)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}

// Reclaim implements [store.Execution].
func (s *Store) Reclaim(ctx context.Context, id string, fence int64, c store.Claim, note store.Note) (store.Approval, error) {
	const op = "reclaim"
	if err := c.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	args := []any{id, fence, c.Owner, c.LeaseUntil, c.At, c.Key}
	return s.decide(ctx, op, note, queryReclaim, args, func(q querier) error {
		st, err := explainTicket(ctx, q, id)
		switch {
		case err != nil:
			return err
		case !st.found:
			return store.ErrNotFound
		}
		if err := store.CheckSkew(c.At, st.now); err != nil {
			return err
		}
		switch {
		case st.state != store.Executing || st.fence != fence:
			return store.ErrFenced
		case c.Key != "" && c.Key != st.key:
			return fmt.Errorf("%w: a reclaim keeps the idempotency key", store.ErrInvalid)
		}
		return store.ErrLeaseLive
	})
}

// decide runs a decision on one ticket in two round trips: BEGIN and
// query (a conditional UPDATE ... RETURNING ticketColumns); then note's
// record and COMMIT. When query matches no row, why says why, in the same
// transaction, and the transaction rolls back.
func (s *Store) decide(ctx context.Context, op string, note store.Note, query string, args []any, why func(querier) error) (store.Approval, error) {
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	var out store.Approval
	err := s.inTxn(ctx, func(t *txn) error {
		b := &pgx.Batch{}
		b.Queue(query, args...)
		a, err := readTicket(t.send(ctx, b))
		switch {
		case errNoRow(err):
			return why(t.conn)
		case err != nil:
			return err
		}
		if err := t.commitNoted(ctx, note, false, a); err != nil {
			return err
		}
		out = a
		return nil
	})
	if err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	return out, nil
}
