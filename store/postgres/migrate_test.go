package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	assert.Equal(t, 1, query(t, schema, `SELECT count(*) FROM schema_version`), "each migration applied once")
	assert.Equal(t, 1, query(t, schema, `SELECT count(*) FROM audit_head`), "one chain head")
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := newSchema(t)
	s := open(t, schema)
	_, _, err := s.Park(ctx, storetest.Ticket("s1", "u1", 1), store.Caps{})
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx))
	again := open(t, schema)
	p, err := again.Pending(ctx, store.Filter{})
	require.NoError(t, err)
	assert.Len(t, p, 1, "migrating again keeps the data")
	assert.Equal(t, 1, query(t, schema, `SELECT count(*) FROM schema_version`))
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
