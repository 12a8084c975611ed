package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// fill stores tickets as new pending tickets with one COPY: the rows Park
// writes, without a transaction each.
func fill(tb testing.TB, s *Store, tickets []store.Approval) {
	tb.Helper()
	rows := make([][]any, len(tickets))
	for i, a := range tickets {
		a.State = store.Pending
		rows[i] = insertArgs(a)
	}
	columns := strings.Split(strings.Join(strings.Fields(insertColumns), ""), ",")
	n, err := s.pool.CopyFrom(context.Background(), pgx.Identifier{"tickets"}, columns, pgx.CopyFromRows(rows))
	require.NoError(tb, err)
	require.Equal(tb, int64(len(tickets)), n)
}

// TestQueryPlans checks that merging, the pending caps, the recovery scan
// of lapsed leases and a listing by state read an index, never the whole
// table, once the table is large: their cost must not grow with the number
// of tickets that are done.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testStore(t)
	const n = 20_000
	tickets := make([]store.Approval, n)
	for i := range tickets {
		tickets[i] = storetest.Ticket(fmt.Sprintf("fill-s%d", i/100), fmt.Sprintf("fill-u%d", i/100), i)
		tickets[i].ID = fmt.Sprintf("fill-%d", i)
	}
	fill(t, s, tickets)
	// Most tickets of a busy store are no longer pending.
	_, err := s.pool.Exec(ctx, `UPDATE tickets SET state = 'denied' WHERE id LIKE 'fill-1%'`)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `UPDATE tickets SET state = 'done', fence = 1, idempotency_key = 'k',
		consumed_at = created_at WHERE id LIKE 'fill-2%'`)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `UPDATE tickets SET state = 'executing', fence = 1, idempotency_key = 'k',
		consumed_at = created_at, lease_until = created_at WHERE id LIKE 'fill-3%'`)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `ANALYZE tickets`)
	require.NoError(t, err)

	a := tickets[0]
	cases := []struct {
		name, query string
		args        []any
		index       string
	}{
		{"merge", queryMerge, mergeArgs(a), `tickets_pending_\w+`},
		{"session cap", querySessionCap, []any{a.Session, a.CreatedAt, 5, a.User, a.Requester.Agent}, `tickets_pending_\w+`},
		{"user cap", queryUserCap, []any{a.User, a.CreatedAt, 5}, `tickets_pending_\w+`},
		{"lapsed leases", queryExpired, []any{a.ExpiresAt, 100}, `tickets_executing`},
		{"list by state", `SELECT ` + ticketColumns + ` FROM tickets WHERE state = ANY($1)
			ORDER BY created_at, id LIMIT 101`, []any{[]string{"done", "approved"}}, `tickets_list`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := s.pool.Query(ctx, "EXPLAIN "+c.query, c.args...)
			require.NoError(t, err)
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			plan := strings.Join(lines, "\n")
			assert.Regexp(t, `Index (Only )?Scan using `+c.index+` on tickets|Bitmap Index Scan on `+c.index, plan)
			assert.NotContains(t, plan, "Seq Scan on tickets", plan)
		})
	}
}

// TestCustomPlans checks that the store's connections plan each statement
// with its arguments. A generic plan cached while the tickets table was
// small is a sequential scan, which TestQueryPlans (fresh statements, so
// custom plans) would not see. The generic plans appends use end with
// their transactions.
func TestCustomPlans(t *testing.T) {
	t.Parallel()
	s := testStore(t)
	for i := range 8 {
		_, err := s.AppendAudit(t.Context(), storetest.Record(fmt.Sprint(i), time.Now()))
		require.NoError(t, err)
	}
	for range 3 { // several pooled connections
		var mode string
		require.NoError(t, s.pool.QueryRow(context.Background(), `SHOW plan_cache_mode`).Scan(&mode))
		assert.Equal(t, "force_custom_plan", mode)
	}
}
