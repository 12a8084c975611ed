package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
)

// approved parks and approves ticket n in s, created at the database's
// clock, with their audit rows.
func approved(t *testing.T, s *postgres.Store, n int) store.Approval {
	t.Helper()
	ctx := t.Context()
	at := dbNow(t, s)
	a, _, err := s.Park(ctx, storetest.TicketAt("s1", "u1", n, at), store.Caps{}, note("park"))
	require.NoError(t, err)
	a, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: "alice", At: at}, note("approve"))
	require.NoError(t, err)
	return a
}

// conn opens a connection of its own with search_path set to schema.
func conn(t *testing.T, schema string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn(t))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(ctx) })
	_, err = c.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	return c
}

// TestDoubleSpend replays the race a gate replica pair could run: two
// executes of one approved ticket, interleaved.
//
// The naive variant, which reads the state and then writes it (check, then
// act, in two statements), lets both replicas spend the approval. The
// store's Consume, one conditional UPDATE, lets exactly one through even
// when both calls are in flight at once.
func TestDoubleSpend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := newSchema(t)
	s := open(t, schema)

	t.Run("NaiveCheckThenAct", func(t *testing.T) {
		a := approved(t, s, 1)
		replicas := []*pgx.Conn{conn(t, schema), conn(t, schema)}
		txs := make([]pgx.Tx, len(replicas))
		for i, c := range replicas {
			tx, err := c.Begin(ctx)
			require.NoError(t, err)
			txs[i] = tx
			var state string
			require.NoError(t, tx.QueryRow(ctx, `SELECT state FROM tickets WHERE id = $1`, a.ID).Scan(&state))
			require.Equal(t, "approved", state, "replica %d sees an approved ticket", i)
		}
		spent := 0
		for i, tx := range txs {
			tag, err := tx.Exec(ctx, `UPDATE tickets SET state = 'executing', idempotency_key = $2,
				consumed_at = now(), owner = $2, fence = 1, lease_until = now() + interval '30 seconds'
				WHERE id = $1`, a.ID, "naive-"+string(rune('a'+i)))
			require.NoError(t, err)
			require.NoError(t, tx.Commit(ctx))
			spent += int(tag.RowsAffected())
		}
		assert.Equal(t, 2, spent, "the naive variant spends one approval twice")
	})

	t.Run("Consume", func(t *testing.T) {
		a := approved(t, s, 2)
		// Hold the row so that both consumes are in flight together.
		release := lockTx(t, schema, `SELECT 1 FROM tickets WHERE id = '`+a.ID+`' FOR UPDATE`)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				at := dbNow(t, s)
				_, errs[i] = s.Consume(ctx, a.ID, store.Claim{Key: "key", Owner: fmt.Sprintf("gate-%d", i), At: at,
					LeaseUntil: at.Add(time.Minute)}, note("consume"))
			}()
		}
		waitForConsumers(t, schema, 2)
		release()
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				assert.ErrorIs(t, err, store.ErrConsumed)
			}
		}
		assert.Equal(t, 1, ok, "exactly one consume spends the approval")
	})
}

// waitForConsumers waits until n consumes are blocked on a lock, so that
// the test knows its calls are in flight together.
func waitForConsumers(t *testing.T, schema string, n int) {
	t.Helper()
	for range 500 {
		if query(t, schema, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'
			AND query LIKE 'UPDATE tickets%SET state = ''executing''%'`, schema) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("fewer than %d calls are waiting on the lock", n)
}
