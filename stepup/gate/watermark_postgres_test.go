package gate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
)

// pgDrill is a PostgreSQL schema; a backup is a pg_dump of it, a restore
// drops the schema and loads the dump back, as a point-in-time restore or
// a failover to a standby that lags would leave it.
type pgDrill struct {
	dsn, schema, dir string
	n                int
}

func (d *pgDrill) open(t *testing.T) store.Store {
	st, err := postgres.Open(t.Context(), d.dsn, &postgres.Options{Schema: d.schema})
	require.NoError(t, err)
	return st
}

func (d *pgDrill) backup(t *testing.T) string {
	to := filepath.Join(d.dir, fmt.Sprintf("backup-%d.sql", d.n))
	d.n++
	out, err := exec.Command("pg_dump", "--dbname="+d.dsn, "--schema="+d.schema, "--no-owner", "--file="+to).CombinedOutput()
	require.NoError(t, err, "pg_dump: %s", out)
	return to
}

func (d *pgDrill) restore(t *testing.T, backup string) {
	d.drop(t)
	out, err := exec.Command("psql", "--dbname="+d.dsn, "--quiet", "--set=ON_ERROR_STOP=1", "--file="+backup).CombinedOutput()
	require.NoError(t, err, "psql: %s", out)
}

func (d *pgDrill) drop(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.dsn)
	require.NoError(t, err)
	defer func() { _ = conn.Close(ctx) }()
	_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{d.schema}.Sanitize()+" CASCADE")
	require.NoError(t, err)
}

func (d *pgDrill) fakeClock() bool { return false }

// TestRestoreDrillNeverRunsACallAgainOnPostgres is the restore drill on
// PostgreSQL: a dump taken mid-flight, restored under a running history.
func TestRestoreDrillNeverRunsACallAgainOnPostgres(t *testing.T) {
	dsn := os.Getenv("ASU_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("PostgreSQL tests skipped: set ASU_POSTGRES_DSN (e.g. `source .ci/postgres.sh`) to run them")
	}
	for _, tool := range []string{"pg_dump", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("PostgreSQL restore drill skipped: %s is not installed", tool)
		}
	}
	restoreDrill(t, 3, func(t *testing.T) *restoreWorld {
		var b [6]byte
		_, _ = rand.Read(b[:])
		d := &pgDrill{dsn: dsn, schema: "drill_" + hex.EncodeToString(b[:]), dir: t.TempDir()}
		t.Cleanup(func() { d.drop(t) })
		return newRestoreWorldOn(t, d, stepuptest.NewClock(stepuptest.Start()), true)
	})
}
