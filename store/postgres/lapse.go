package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

// queryReopen moves an approval by votes back to pending, keeping the
// votes of the approvers $2 in their order, for the reason $3, only while
// it is still the approval decided at $4, unexpired at $5 and $5 is on the
// database's clock. One conditional UPDATE: a Consume or a Vote of the
// same row queues on its lock and sees the state this one left.
var queryReopen = `UPDATE tickets SET
		state = 'pending',
		votes = (SELECT jsonb_agg(e.v ORDER BY e.o) FROM jsonb_array_elements(tickets.votes) WITH ORDINALITY AS e(v, o)
			WHERE e.v->>'approver' = ANY($2::text[])),
		approver = '', reason = $3, evidence = NULL, resolved_at = NULL, shown_at = NULL
	WHERE id = $1 AND state = 'approved' AND jsonb_array_length(coalesce(votes, '[]'::jsonb)) > 0
		AND resolved_at = $4::timestamptz AND expires_at > $5::timestamptz AND ` + skewOK(5) + `
	RETURNING ` + ticketColumns

// Reopen implements [store.Votes] with one conditional UPDATE
// (queryReopen) and the audit row in one transaction; only when the
// UPDATE changes nothing is the ticket read again to say why.
func (s *Store) Reopen(ctx context.Context, id string, l store.Lapse, note store.Note) (store.Approval, error) {
	const op = "reopen"
	if err := l.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	keep := l.Keep
	if keep == nil {
		keep = []string{}
	}
	args := []any{id, keep, l.Reason, l.ApprovedAt, l.At}
	return s.decide(ctx, op, note, queryReopen, args, func(q querier) error { return whyNotReopened(ctx, q, id, l) })
}

// whyNotReopened says why Reopen changed nothing, in the order the memory
// store refuses: no ticket, its state, the caller's clock, expiry.
func whyNotReopened(ctx context.Context, q querier, id string, l store.Lapse) error {
	var (
		now      time.Time
		state    pgtype.Text
		expires  pgtype.Timestamptz
		resolved pgtype.Timestamptz
		votes    pgtype.Int4
	)
	err := q.QueryRow(ctx, `SELECT clock_timestamp(), t.state, t.expires_at, t.resolved_at, jsonb_array_length(coalesce(t.votes, '[]'::jsonb))
		FROM (SELECT 1) AS one LEFT JOIN tickets t ON t.id = $1`, id).
		Scan(&now, &state, &expires, &resolved, &votes)
	switch {
	case err != nil:
		return err
	case !state.Valid:
		return store.ErrNotFound
	}
	switch store.State(state.String) {
	case store.Executing, store.Done, store.Failed, store.Abandoned:
		return store.ErrConsumed
	case store.Revoked:
		return store.ErrRevoked
	case store.Approved:
		if votes.Int32 == 0 || !fromTS(resolved).Equal(l.ApprovedAt.Truncate(time.Microsecond)) {
			return store.ErrNotApproved
		}
	default:
		return store.ErrNotApproved
	}
	if err := store.CheckSkew(l.At, now); err != nil {
		return err
	}
	if !l.At.Truncate(time.Microsecond).Before(fromTS(expires)) {
		return store.ErrExpired
	}
	// Approved by that quorum and unexpired, yet unchanged: only a
	// concurrent change explains it.
	return store.ErrNotApproved
}
