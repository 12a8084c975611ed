package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/store"
)

// Park implements [store.Tickets]. The transaction takes advisory locks on
// the session and then the user (always in that order, so two parks never
// wait on each other in a cycle); while they are held no other replica can
// park in that session or for that user, so the merge lookup and the cap
// counts see every ticket parked before, and the cap holds.
func (s *Store) Park(ctx context.Context, a store.Approval, caps store.Caps) (store.Approval, bool, error) {
	const op = "park"
	if err := a.Check(); err != nil {
		return store.Approval{}, false, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, false, s.fail(ctx, op, err)
	}
	if a.ID == "" {
		a.ID = store.NewID()
	}
	var (
		out    store.Approval
		merged bool
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One round trip; a batch runs its statements in order, so every
		// Park takes the session lock before the user lock.
		batch := &pgx.Batch{}
		batch.Queue(queryLock, lockSession, a.Session)
		batch.Queue(queryLock, lockUser, a.User)
		// A live pending duplicate takes the merge, even at the cap.
		batch.Queue(queryMerge, a.Session, a.Digest[:], a.CreatedAt)
		t, err := parkLocked(tx.SendBatch(ctx, batch))
		switch {
		case err == nil:
			out, merged = t, true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if err := checkCap(ctx, tx, "session", a.Session, a.CreatedAt, caps.PerSession); err != nil {
			return err
		}
		if err := checkCap(ctx, tx, "user", a.User, a.CreatedAt, caps.PerUser); err != nil {
			return err
		}
		out, err = scanTicket(tx.QueryRow(ctx, queryInsert, insertArgs(a)...))
		return err
	})
	if err != nil {
		return store.Approval{}, false, s.fail(ctx, op, err)
	}
	return out, merged, nil
}

// parkLocked reads the results of Park's batch: the two locks, then the
// merged ticket or pgx.ErrNoRows.
func parkLocked(br pgx.BatchResults) (store.Approval, error) {
	for range 2 {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return store.Approval{}, err
		}
	}
	t, err := scanTicket(br.QueryRow())
	if cerr := br.Close(); cerr != nil && (err == nil || errors.Is(err, pgx.ErrNoRows)) {
		err = cerr
	}
	return t, err
}

// The statements of Park. Each reads only pending tickets of one session
// or user through a partial index, so its cost does not grow with the
// table (TestQueryPlans checks the plans).
const (
	// queryLock takes the advisory lock ($1, hash of the schema and $2)
	// until the transaction ends.
	queryLock = `SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '/' || $2))`
	// queryMerge adds a merge to the oldest live pending ticket with the
	// session ($1) and digest ($2) at time $3.
	queryMerge = `UPDATE tickets SET merged = merged + 1
		WHERE id = (SELECT id FROM tickets
			WHERE session = $1 AND digest = $2 AND state = 'pending' AND expires_at > $3
			ORDER BY created_at, id LIMIT 1)
		RETURNING ` + ticketColumns
	// queryInsert stores a new pending ticket from insertArgs.
	queryInsert = `INSERT INTO tickets (` + insertColumns + `)
		VALUES ($1, 'pending', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
		RETURNING ` + ticketColumns
	insertColumns = `id, state, effect, digest, tool, effect_class, card, card_hash, nonce, created_at, expires_at,
		requester_user, requester_agent, requester_delegations, user_name, session, task, step, policy_version,
		taint, rationale`
)

// queryCap counts, up to $3, the pending tickets live at $2 whose session
// or user ("session" or "user") is $1.
func queryCap(what string) string {
	column := "session"
	if what == "user" {
		column = "user_name"
	}
	return `SELECT count(*) FROM (SELECT 1 FROM tickets
		WHERE ` + column + ` = $1 AND state = 'pending' AND expires_at > $2 LIMIT $3) AS live`
}

// insertArgs is a new ticket as the arguments of queryInsert, in the order
// of insertColumns without state.
func insertArgs(a store.Approval) []any {
	return []any{a.ID, a.Effect, a.Digest[:], a.Tool, a.EffectClass, a.Card, a.CardHash[:], a.Nonce[:],
		a.CreatedAt, a.ExpiresAt, a.Requester.User, a.Requester.Agent, a.Requester.Delegations,
		a.User, a.Session, a.Task, a.Step, a.PolicyVersion, a.Taint, a.Rationale}
}

// checkCap fails with [store.ErrPendingCap] when the pending tickets of
// the session or user ("session" or "user") key, live at now, number limit
// or more. The count stops at limit.
func checkCap(ctx context.Context, tx pgx.Tx, what, key string, now time.Time, limit int) error {
	if limit <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRow(ctx, queryCap(what), key, now, limit).Scan(&n); err != nil {
		return err
	}
	if n >= limit {
		return fmt.Errorf("%s: %w", what, store.ErrPendingCap)
	}
	return nil
}

// Get implements [store.Tickets].
func (s *Store) Get(ctx context.Context, id string) (store.Approval, error) {
	const op = "get ticket"
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	a, err := scanTicket(s.pool.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	return a, nil
}

// Resolve implements [store.Tickets] with one conditional UPDATE; only
// when it changes nothing is the ticket read again, to say why.
func (s *Store) Resolve(ctx context.Context, id string, r store.Resolution) (store.Approval, error) {
	const op = "resolve"
	if err := r.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	a, err := scanTicket(s.pool.QueryRow(ctx, `UPDATE tickets
		SET state = $2, approver = $3, reason = $4, evidence = $5, resolved_at = $6
		WHERE id = $1 AND state = 'pending' AND ($2 <> 'approved' OR expires_at > $6)
		RETURNING `+ticketColumns, id, string(r.To), r.Approver, r.Reason, r.Evidence, r.At))
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.whyNot(ctx, id, func(state store.State, expires time.Time) error {
			if state != store.Pending {
				return store.ErrResolved
			}
			return store.ErrExpired
		})
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	return a, nil
}

// whyNot reads ticket id after a conditional update matched no row and
// returns [store.ErrNotFound], or what explain says of its state.
func (s *Store) whyNot(ctx context.Context, id string, explain func(store.State, time.Time) error) error {
	var (
		state   string
		expires time.Time
	)
	err := s.pool.QueryRow(ctx, `SELECT state, expires_at FROM tickets WHERE id = $1`, id).Scan(&state, &expires)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return err
	}
	return explain(store.State(state), expires)
}

// ExpirePending implements [store.Tickets].
func (s *Store) ExpirePending(ctx context.Context, now time.Time) ([]store.Approval, error) {
	const op = "expire pending"
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	rows, err := s.pool.Query(ctx, `WITH expired AS (
			UPDATE tickets SET state = 'expired', resolved_at = $1
			WHERE state = 'pending' AND expires_at <= $1
			RETURNING `+ticketColumns+`)
		SELECT `+ticketColumns+` FROM expired ORDER BY expires_at, id`, now)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := collectTickets(rows)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}

// Pending implements [store.Tickets].
func (s *Store) Pending(ctx context.Context, f store.Filter) ([]store.Approval, error) {
	const op = "pending"
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	where, args := `state = 'pending'`, []any{}
	if f.Session != "" {
		args = append(args, f.Session)
		where += fmt.Sprintf(` AND session = $%d`, len(args))
	}
	if f.User != "" {
		args = append(args, f.User)
		where += fmt.Sprintf(` AND user_name = $%d`, len(args))
	}
	rows, err := s.pool.Query(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := collectTickets(rows)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}
