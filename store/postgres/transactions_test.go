package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
)

// TestDecisionDiesWithItsRow kills the database connection of a decision
// after it changed the ticket and while it waits to append its audit row
// (another transaction holds the chain head), as a crash of the gate or a
// lost connection would. Before contract v2 the change and the row were
// two transactions, and the change stayed without its row; now neither is
// written. Each decision is tried, and tried again afterwards: the killed
// attempt left nothing in its way.
func TestDecisionDiesWithItsRow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := open(t, schema)

	type subject struct{ pending, approved, executing string }
	setup := func(n int) subject {
		at := dbNow(t, s)
		p, _, err := s.Park(ctx, storetest.TicketAt("s1", "u1", n, at), store.Caps{}, note("park"))
		require.NoError(t, err)
		a := approved(t, s, n+1)
		e := approved(t, s, n+2)
		e, err = s.Consume(ctx, e.ID, store.Claim{Key: "k", Owner: "gate-1", At: at, LeaseUntil: at.Add(time.Minute)},
			note("consume"))
		require.NoError(t, err)
		return subject{p.ID, a.ID, e.ID}
	}
	decisions := []struct {
		name string
		call func(ctx context.Context, sub subject) error
	}{
		{"Park", func(ctx context.Context, sub subject) error {
			_, _, err := s.Park(ctx, storetest.TicketAt("s9", "u9", 99, clockOf(s)), store.Caps{}, note("park"))
			return err
		}},
		{"Approve", func(ctx context.Context, sub subject) error {
			_, err := s.Resolve(ctx, sub.pending, store.Resolution{To: store.Approved, Approver: "u1", At: clockOf(s)},
				note("approve"))
			return err
		}},
		{"Revoke", func(ctx context.Context, sub subject) error {
			_, err := s.Resolve(ctx, sub.approved, store.Resolution{To: store.Revoked, At: clockOf(s)}, note("revoke"))
			return err
		}},
		{"Consume", func(ctx context.Context, sub subject) error {
			at := clockOf(s)
			_, err := s.Consume(ctx, sub.approved, store.Claim{Key: "k2", Owner: "gate-2", At: at, LeaseUntil: at.Add(time.Minute)},
				note("consume"))
			return err
		}},
		{"Finish", func(ctx context.Context, sub subject) error {
			_, err := s.Finish(ctx, sub.executing, 1, store.Outcome{State: store.Done, At: clockOf(s)}, note("finish"))
			return err
		}},
	}
	t.Run("NaiveTwoTransactions", func(t *testing.T) {
		// The change commits on its own; the append that should follow dies.
		sub := setup(0)
		head, err := s.AuditHead(ctx)
		require.NoError(t, err)
		release := lockTx(t, schema, `SELECT 1 FROM audit_head FOR UPDATE`)
		_, err = conn(t, schema).Exec(ctx, `UPDATE tickets SET state = 'approved', approver = 'u1' WHERE id = $1`, sub.pending)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			_, err := s.AppendAudit(ctx, storetest.Record("approve", clockOf(s)))
			done <- err
		}()
		_ = query(t, schema, `SELECT count(*) FROM (SELECT pg_terminate_backend($1)) AS k`, waitForHeadWaiter(t, schema))
		require.Error(t, within(t, done))
		release()
		a, err := s.Get(ctx, sub.pending)
		require.NoError(t, err)
		assert.Equal(t, store.Approved, a.State, "the naive variant keeps the decision...")
		after, err := s.AuditHead(ctx)
		require.NoError(t, err)
		assert.Equal(t, head, after, "...without its row")
	})
	for i, d := range decisions {
		t.Run(d.name, func(t *testing.T) {
			sub := setup(10 * (i + 1))
			snapshot := func() any {
				var out []any
				for _, id := range []string{sub.pending, sub.approved, sub.executing} {
					a, err := s.Get(ctx, id)
					require.NoError(t, err)
					out = append(out, a.State, a.Fence, a.Owner)
				}
				page, _, err := s.List(ctx, store.Filter{Limit: store.MaxListLimit})
				require.NoError(t, err)
				head, err := s.AuditHead(ctx)
				require.NoError(t, err)
				return append(out, len(page), head)
			}
			before := snapshot()
			release := lockTx(t, schema, `SELECT 1 FROM audit_head FOR UPDATE`)
			done := make(chan error, 1)
			go func() { done <- d.call(ctx, sub) }()
			pid := waitForHeadWaiter(t, schema)
			_ = query(t, schema, `SELECT count(*) FROM (SELECT pg_terminate_backend($1)) AS k`, pid)
			err := within(t, done)
			require.Error(t, err, "the decision whose connection died fails")
			assert.ErrorIs(t, err, postgres.ErrDatabase)
			release()
			assert.Equal(t, before, snapshot(), "the change died with its row")
			assert.NoError(t, d.call(ctx, sub), "and left nothing in the way of a retry")
		})
	}
}

// waitForHeadWaiter returns the process id of the backend of schema's
// store waiting for the chain head lock.
func waitForHeadWaiter(t *testing.T, schema string) int {
	t.Helper()
	for range 500 {
		if pid := query(t, schema, `SELECT coalesce(max(pid), 0) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'
			AND (query LIKE 'WITH h AS (%FROM audit_head FOR UPDATE%' OR query = 'SELECT 1 FROM audit_head FOR UPDATE')`,
			schema); pid != 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no decision is waiting on the chain head")
	return 0
}

// within returns what done delivers, failing t if nothing arrives in a
// minute: a test that killed the wrong backend stops instead of hanging.
func within(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("the decision whose connection was killed never returned")
		return nil
	}
}
