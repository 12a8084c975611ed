package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// testStore opens a store in a schema of its own, dropped when tb ends,
// or skips tb when ASU_POSTGRES_DSN is unset. (The external tests have
// the same helpers; internal tests cannot share them.)
func testStore(tb testing.TB) *Store {
	tb.Helper()
	dsn := os.Getenv("ASU_POSTGRES_DSN")
	if dsn == "" {
		tb.Skip("PostgreSQL tests skipped: set ASU_POSTGRES_DSN (e.g. `source .ci/postgres.sh`) to run them")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "asu_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	s, err := Open(ctx, dsn, &Options{Schema: schema})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
