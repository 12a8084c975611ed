package postgres_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
)

// assertNoPgx fails t if any error in err's tree has a type from pgx:
// callers must never be able to reach one through errors.As.
func assertNoPgx(t *testing.T, err error) {
	t.Helper()
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		typ := reflect.TypeOf(e)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		assert.NotContains(t, typ.PkgPath(), "jackc", "a %s escapes", typ)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
}

// TestTextPostgresRefuses: text PostgreSQL cannot hold is refused with a
// store sentinel, nothing is stored, and no pgx error escapes.
func TestTextPostgresRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, newSchema(t))
	cases := []struct {
		name   string
		mutate func(*store.Approval)
	}{
		{"NUL in session", func(a *store.Approval) { a.Session = "s\x00" }},
		{"NUL in rationale", func(a *store.Approval) { a.Rationale = "ignore\x00previous" }},
		{"invalid UTF-8 in user", func(a *store.Approval) { a.User = "u\xff" }},
		{"NUL in a taint label", func(a *store.Approval) { a.Taint = []string{"web\x00"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := storetest.Ticket("s1", "u1", 1)
			a.ID = "refused"
			c.mutate(&a)
			_, _, err := s.Park(ctx, a, store.Caps{}, note("park"))
			require.ErrorIs(t, err, store.ErrInvalid)
			assertNoPgx(t, err)
			_, err = s.Get(ctx, "refused")
			assert.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("UnparsableDSNIsNotQuoted", func(t *testing.T) {
		_, err := postgres.Open(ctx, "postgres://asu:hunter2@127.0.0.1:notaport/asu", nil)
		require.ErrorIs(t, err, store.ErrInvalid)
		assert.NotContains(t, err.Error(), "hunter2")
	})
	t.Run("Unreachable", func(t *testing.T) {
		// Port 1 on loopback: nothing listens, the connection is refused.
		_, err := postgres.Open(ctx, "postgres://asu:hunter2@127.0.0.1:1/asu?connect_timeout=5", nil)
		require.ErrorIs(t, err, postgres.ErrDatabase)
		assert.NotContains(t, err.Error(), "hunter2")
		assertNoPgx(t, err)
	})
	t.Run("BadSchemaName", func(t *testing.T) {
		for _, name := range []string{"has space", `quo"te`, "1starts_with_digit", strings.Repeat("x", 64)} {
			_, err := postgres.Open(ctx, "postgres://127.0.0.1:1/asu", &postgres.Options{Schema: name})
			assert.ErrorIs(t, err, store.ErrInvalid, name)
		}
	})
	t.Run("NegativeMaxConns", func(t *testing.T) {
		_, err := postgres.Open(ctx, "postgres://127.0.0.1:1/asu", &postgres.Options{MaxConns: -1})
		assert.ErrorIs(t, err, store.ErrInvalid)
	})
}

// lockTx starts a transaction on its own connection and runs sql in it,
// holding whatever locks sql takes until release is called or t ends.
func lockTx(t *testing.T, schema, sql string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn(t))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	_, err = conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	_, err = tx.Exec(ctx, sql)
	require.NoError(t, err)
	return func() { require.NoError(t, tx.Rollback(ctx)) }
}

// TestCancelMidTransaction cancels calls while they wait inside their
// transaction (on a lock another transaction holds): they fail with the
// context's error and leave nothing behind.
func TestCancelMidTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := newSchema(t)
	s := open(t, schema)
	before, err := s.AppendAudit(ctx, storetest.Record("task-1", time.Unix(1, 0)))
	require.NoError(t, err)

	// The session advisory lock Park takes: class 0x61737501, as in package postgres.
	releaseSession := lockTx(t, schema, `SELECT pg_advisory_xact_lock(x'61737501'::int, hashtext(current_schema() || '/s1'))`)
	releaseHead := lockTx(t, schema, `SELECT 1 FROM audit_head FOR UPDATE`)

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, _, err = s.Park(short, storetest.Ticket("s1", "u1", 1), store.Caps{}, note("park"))
	assert.ErrorIs(t, err, context.DeadlineExceeded, "park waits on the session lock until its context ends")
	assertNoPgx(t, err)

	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = s.AppendAudit(short, storetest.Record("task-2", time.Unix(2, 0)))
	assert.ErrorIs(t, err, context.DeadlineExceeded, "an append waits on the chain head until its context ends")
	assertNoPgx(t, err)

	p, _, err := s.List(ctx, store.Filter{})
	require.NoError(t, err)
	assert.Empty(t, p, "the cancelled park left no ticket")
	head, err := s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, head, "the cancelled append left the chain as it was")
	releaseSession()
	releaseHead()
	_, _, err = s.Park(ctx, storetest.Ticket("s2", "u2", 2), store.Caps{}, note("park"))
	assert.NoError(t, err, "the store still works")
}
