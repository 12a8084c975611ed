package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

// Now implements [store.Clock] with the database's clock_timestamp(): one
// clock for every replica, whatever their own clocks say.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	const op = "now"
	if err := s.enterRead(ctx); err != nil {
		return time.Time{}, s.fail(ctx, op, err)
	}
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, s.fail(ctx, op, err)
	}
	return now.UTC(), nil
}

// skewOK is the SQL condition that the time parameter $n is within
// [store.MaxSkew] of the database's clock, read when the condition is
// evaluated: inside the deciding statement, so inside its transaction and
// after any row lock it waited for.
func skewOK(n int) string {
	return fmt.Sprintf(`$%[1]d BETWEEN clock_timestamp() - %[2]s AND clock_timestamp() + %[2]s`, n, skewInterval)
}

// skewInterval is [store.MaxSkew] as an SQL interval.
var skewInterval = fmt.Sprintf(`interval '%d microseconds'`, store.MaxSkew.Microseconds())

// ticketState is what explaining a refused ticket change reads: the
// database's clock and the ticket's state, found false when there is no
// such ticket.
type ticketState struct {
	now     time.Time
	found   bool
	state   store.State
	expires time.Time
	lease   time.Time
	fence   int64
	key     string
}

// explainTicket reads ticketState for id inside tx, after a conditional
// update matched no row. It runs in the same transaction, so it sees the
// row the update saw or a newer one: the reason it gives is that of a
// refusal that really happened.
func explainTicket(ctx context.Context, q querier, id string) (ticketState, error) {
	var (
		st             ticketState
		state, key     pgtype.Text
		expires, lease pgtype.Timestamptz
		fence          pgtype.Int8
	)
	err := q.QueryRow(ctx, `SELECT clock_timestamp(), t.state, t.expires_at, t.lease_until, t.fence, t.idempotency_key
		FROM (SELECT 1) AS one LEFT JOIN tickets t ON t.id = $1`, id).
		Scan(&st.now, &state, &expires, &lease, &fence, &key)
	if err != nil {
		return ticketState{}, err
	}
	st.found = state.Valid
	st.state, st.expires, st.lease = store.State(state.String), fromTS(expires), fromTS(lease)
	st.fence, st.key = fence.Int64, key.String
	return st, nil
}

// errNoRow reports whether err is the no-row result of a conditional
// UPDATE ... RETURNING that changed nothing.
func errNoRow(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
