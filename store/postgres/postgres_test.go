package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
	"github.com/agentstepup/asu/store/storetest/process"
)

// envDSN names the database the tests use; they skip without it.
const envDSN = "ASU_POSTGRES_DSN"

// dsn returns the test database's DSN, or skips t.
func dsn(t testing.TB) string {
	t.Helper()
	d := os.Getenv(envDSN)
	if d == "" {
		t.Skip("PostgreSQL tests skipped: set ASU_POSTGRES_DSN (e.g. `source .ci/postgres.sh`) to run them")
	}
	return d
}

// newSchema returns a fresh schema name and drops that schema, with all
// it holds, when t ends: each test gets its own tables, so tests run in
// parallel and leave nothing behind.
func newSchema(t testing.TB) string {
	t.Helper()
	return newSchemaAt(t, dsn(t))
}

// newSchemaAt is newSchema in the database d.
func newSchemaAt(t testing.TB, d string) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "asu_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, d)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return schema
}

// open opens the store in schema and closes it when t ends. Its
// connections carry schema as their application_name, so a test that
// looks for its own backends in pg_stat_activity does not find another
// test's (tests of every package share the database).
func open(t testing.TB, schema string) *postgres.Store {
	t.Helper()
	return openAt(t, dsn(t), schema)
}

// openAt is open in the database d.
func openAt(t testing.TB, d, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), named(d, schema), &postgres.Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestConformance runs the suite, holding the store to reading back only
// what it wrote: the suite's rows are changed by an UPDATE on a
// connection of its own, as any other writer could.
func TestConformance(t *testing.T) {
	t.Parallel()
	dsn(t)
	var schemas sync.Map // store.Store -> its schema
	storetest.Run(t, func(t *testing.T) store.Store {
		schema := newSchema(t)
		s := open(t, schema)
		schemas.Store(s, schema)
		return s
	}, storetest.WithAuditTamper(func(t *testing.T, s store.Store, r audit.Record) {
		schema, ok := schemas.Load(s)
		require.True(t, ok)
		tamperAudit(t, schema.(string), r)
	}))
}

// tamperAudit replaces the audit row r.Seq in schema with r, every
// column, and leaves the chain head as it was.
func tamperAudit(t *testing.T, schema string, r audit.Record) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var args []byte
	if r.Args != nil {
		args = r.Args
	}
	tag, err := conn.Exec(ctx, `UPDATE `+pgx.Identifier{schema, "audit"}.Sanitize()+` SET time = $2, ticket_id = $3,
		task = $4, step = $5, session = $6, tool = $7, effect_class = $8, args_digest = $9, args = $10,
		principal_user = $11, principal_agent = $12, principal_delegations = $13, policy_version = $14,
		decision = $15, reason = $16, taint = $17, approver = $18, nonce = $19, card_hash = $20,
		decision_millis = $21, result = $22, idempotency_key = $23, prev_hash = $24, hash = $25 WHERE seq = $1`,
		r.Seq, r.Time, r.TicketID, r.Task, r.Step, r.Session, r.Tool, r.EffectClass, r.ArgsDigest[:], args,
		r.Principal.User, r.Principal.Agent, r.Principal.Delegations, r.PolicyVersion, r.Decision, r.Reason, r.Taint,
		r.Approver, r.Nonce, r.CardHash, r.DecisionMillis, r.Result, r.IdempotencyKey, r.PrevHash[:], r.Hash[:])
	require.NoError(t, err)
	require.Equal(t, int64(1), tag.RowsAffected())
}

func TestProcesses(t *testing.T) {
	t.Parallel()
	dsn(t)
	process.Run(t, process.Backend{
		Create: func(t *testing.T) string { return newSchema(t) },
		Open:   func(t testing.TB, schema string) store.Store { return open(t, schema) },
	})
}

// dbNow reads the database's clock through s, to the millisecond.
func dbNow(t testing.TB, s *postgres.Store) time.Time {
	t.Helper()
	n, err := s.Now(context.Background())
	require.NoError(t, err)
	return n.Truncate(time.Millisecond)
}

// note returns a Note recording decision on the ticket it is given, its
// state as the reason.
func note(decision string) store.Note {
	return func(a store.Approval, merged bool) audit.Record {
		return audit.Record{TicketID: a.ID, Session: a.Session, Tool: a.Tool, ArgsDigest: a.Digest,
			Principal: a.Requester, Decision: decision, Reason: string(a.State), Approver: a.Approver,
			IdempotencyKey: a.IdempotencyKey}
	}
}

// TestRunClock declares what this backend cannot do: storetest.RunClock
// sets the store's clock, and the database's clock cannot be set. The
// conformance suite reads the clock instead, and the skew refusals are
// tested there against the database's own clock.
func TestRunClock(t *testing.T) {
	t.Skip("storetest.RunClock needs a settable clock; PostgreSQL's clock_timestamp() is not one")
}

// named returns dsn with application_name set to name.
func named(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("application_name", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " application_name=" + name
}
