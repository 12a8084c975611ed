package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
)

// query runs sql in schema on a connection of its own and returns the
// single integer it selects.
func query(t *testing.T, schema, sql string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	var n int
	require.NoError(t, conn.QueryRow(ctx, sql, args...).Scan(&n))
	return n
}

// migrationCount is the number of migrations this build carries.
func migrationCount(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return len(files)
}

func TestMigrateConcurrentOpens(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	const replicas = 8
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := postgres.Open(context.Background(), dsn(t), &postgres.Options{Schema: schema})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "replica %d", i)
	}
	assert.Equal(t, migrationCount(t), query(t, schema, `SELECT count(*) FROM schema_version`), "each migration applied once")
	assert.Equal(t, 1, query(t, schema, `SELECT count(*) FROM audit_head`), "one chain head")
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := newSchema(t)
	s := open(t, schema)
	_, _, err := s.Park(ctx, storetest.Ticket("s1", "u1", 1), store.Caps{}, note("park"))
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx))
	again := open(t, schema)
	p, _, err := again.List(ctx, store.Filter{States: []store.State{store.Pending}})
	require.NoError(t, err)
	assert.Len(t, p, 1, "migrating again keeps the data")
	assert.Equal(t, migrationCount(t), query(t, schema, `SELECT count(*) FROM schema_version`))
}

func TestSchemaVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("NewerThanBuild", func(t *testing.T) {
		schema := newSchema(t)
		s := open(t, schema)
		_ = query(t, schema, `WITH i AS (INSERT INTO schema_version (version) VALUES (999) RETURNING 1) SELECT count(*) FROM i`)
		_, err := postgres.Open(ctx, dsn(t), &postgres.Options{Schema: schema})
		assert.ErrorIs(t, err, postgres.ErrSchemaVersion)
		assert.ErrorIs(t, s.Migrate(ctx), postgres.ErrSchemaVersion, "a newer schema is never downgraded")
	})
	t.Run("SkipMigrate", func(t *testing.T) {
		schema := newSchema(t)
		_, err := postgres.Open(ctx, dsn(t), &postgres.Options{Schema: schema, SkipMigrate: true})
		assert.ErrorIs(t, err, postgres.ErrSchemaVersion, "an unmigrated schema is refused")
		open(t, schema) // migrates
		s, err := postgres.Open(ctx, dsn(t), &postgres.Options{Schema: schema, SkipMigrate: true})
		require.NoError(t, err, "a migrated schema is accepted")
		assert.NoError(t, s.Close())
	})
}

// TestMigrateFromVersion1 upgrades a database a previous build wrote (the
// first migration only) while it holds tickets in every state that build
// knew and an audit chain, and checks what migration 002 promises: the
// data stays, tickets a crashed gate left executing become reclaimable
// with their idempotency key, finished ones keep a valid fencing token,
// and the chain goes on from its head, with times that never decrease.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	v1, err := os.ReadFile(filepath.Join("migrations", "001_initial.sql"))
	require.NoError(t, err)
	c := conn(t, "public")
	_, err = c.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	_, err = c.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	_, err = c.Exec(ctx, string(v1))
	require.NoError(t, err)
	_, err = c.Exec(ctx, `CREATE TABLE schema_version (version integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now()); INSERT INTO schema_version (version) VALUES (1)`)
	require.NoError(t, err)

	// Tickets as version 1 stored them, in each of its states.
	created := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	states := []string{"pending", "approved", "denied", "expired", "cancelled", "executing", "done"}
	for i, state := range states {
		a := storetest.TicketAt("s1", "u1", i, created)
		key, consumed := "", any(nil)
		if state == "executing" || state == "done" {
			key, consumed = "key-"+state, created.Add(time.Minute)
		}
		_, err := c.Exec(ctx, `INSERT INTO tickets (id, state, effect, digest, tool, effect_class, card, card_hash,
			nonce, created_at, expires_at, requester_user, requester_agent, user_name, session, task, step,
			policy_version, rationale, idempotency_key, consumed_at)
			VALUES ($1, $2, $3, $4, 'pay', 'irreversible', $5, $6, $7, $8, $9, 'u1', 'agent-1', 'u1', 's1',
			'task-1', 'step', 'v1', 'why', $10, $11)`,
			state, state, a.Effect, a.Digest[:], a.Card, a.CardHash[:], a.Nonce[:], a.CreatedAt, a.ExpiresAt,
			key, consumed)
		require.NoError(t, err, state)
	}
	// A chain of two records whose last time is ahead of every clock.
	var head audit.Record
	future := time.Now().Add(time.Hour)
	for i, at := range []time.Time{created, future} {
		r, err := store.ChainNext(head, storetest.Record("task-1", at), at)
		require.NoError(t, err)
		_, err = c.Exec(ctx, `INSERT INTO audit (seq, time, ticket_id, task, step, session, tool, effect_class,
			args_digest, principal_user, principal_agent, policy_version, decision, reason, taint, approver,
			nonce, card_hash, decision_millis, result, idempotency_key, prev_hash, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, '', '', '', 0, '', '', $16, $17)`,
			r.Seq, r.Time, r.TicketID, r.Task, r.Step, r.Session, r.Tool, r.EffectClass, r.ArgsDigest[:],
			r.Principal.User, r.Principal.Agent, r.PolicyVersion, r.Decision, r.Reason, r.Taint,
			r.PrevHash[:], r.Hash[:])
		require.NoError(t, err, "record %d", i)
		_, err = c.Exec(ctx, `UPDATE audit_head SET seq = $1, hash = $2`, r.Seq, r.Hash[:])
		require.NoError(t, err)
		head = r
	}

	s := open(t, schema) // migrates
	assert.Equal(t, migrationCount(t), query(t, schema, `SELECT max(version) FROM schema_version`))
	for _, state := range states {
		a, err := s.Get(ctx, state)
		require.NoError(t, err, state)
		assert.Equal(t, store.State(state), a.State, "the data stays")
		assert.Empty(t, a.Approvers)
		if state == "executing" || state == "done" {
			assert.EqualValues(t, 1, a.Fence, "%s: consumed once", state)
			assert.Equal(t, "key-"+state, a.IdempotencyKey)
		} else {
			assert.Zero(t, a.Fence, state)
		}
	}

	// The interrupted execution is reclaimable at once, keeping its key.
	now := dbNow(t, s)
	lapsed, err := s.Expired(ctx, now, 0)
	require.NoError(t, err)
	require.Len(t, lapsed, 1)
	assert.Equal(t, "executing", lapsed[0].ID)
	got, err := s.Reclaim(ctx, "executing", 1, store.Claim{Owner: "gate-2", At: now, LeaseUntil: now.Add(time.Minute)},
		note("reclaim"))
	require.NoError(t, err)
	assert.Equal(t, "key-executing", got.IdempotencyKey)
	assert.EqualValues(t, 2, got.Fence)
	_, err = s.Finish(ctx, "done", 1, store.Outcome{State: store.Done, At: now}, note("finish"))
	assert.ErrorIs(t, err, store.ErrFenced, "a finished ticket is not finished again")

	// The chain goes on from the old head, never back in time.
	r, err := s.AppendAudit(ctx, storetest.Record("task-2", now))
	require.NoError(t, err)
	assert.Equal(t, head.Seq+2, r.Seq, "the reclaim's row and this one follow the old head")
	assert.Equal(t, head.Time, r.Time, "stamped no earlier than the head, which is ahead of the clock")
	all, err := s.AuditSeq(ctx, 1, 100)
	require.NoError(t, err)
	require.NoError(t, audit.VerifyChain(all, canon.Digest{}))
}
