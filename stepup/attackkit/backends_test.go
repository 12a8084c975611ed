package attackkit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/sqlite"
)

// onSQLite is asu's in-process gate on store/sqlite (a file, the store's
// clock a fake one), behind a framework loop.
func onSQLite(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	clock := stepuptest.NewClock(stepuptest.Start())
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "asu.db"), &sqlite.Options{Clock: clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	var opts []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, tools))
	}
	p := &versioned{Policy: stepuptest.SeedCatalog()}
	g, err := gate.New(st, p, stepuptest.Passkeys(st), append([]gate.Option{gate.WithDwell(0)}, opts...)...)
	require.NoError(t, err)
	enroll, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithClock(clock.Now),
		passkey.WithSealKey(stepuptest.SealKey()))
	require.NoError(t, err)
	d := attackkit.NewDesk(g.Desk(), enroll, stepuptest.RP(), clock.Now)
	_, err = d.Person(t.Context(), attackkit.User) // the user has a passkey before any call reaches them
	require.NoError(t, err)
	tg := newLoop(g).target(d, func(d time.Duration) { clock.Advance(d) })
	tg.ChangePolicy = p.change
	return tg
}

// TestInProcessGateOnSQLite runs the catalogue against the gate on the
// embedded store: every class holds on a database as on memory.
func TestInProcessGateOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("the catalogue on SQLite is slow under -short")
	}
	assertAllHeld(t, attackkit.Run(t, onSQLite))
}

// onPostgres is asu's in-process gate on store/postgres, in a schema of
// its own. Its clock is the database's, which a test cannot move: the
// attacks that need time to pass are skipped.
func onPostgres(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	dsn := os.Getenv("ASU_POSTGRES_DSN")
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "kit_" + hex.EncodeToString(b[:])
	st, err := postgres.Open(t.Context(), dsn, &postgres.Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = st.Close()
		if conn, err := pgx.Connect(context.Background(), dsn); err == nil {
			_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			_ = conn.Close(context.Background())
		}
	})
	var opts []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, tools))
	}
	p := &versioned{Policy: stepuptest.SeedCatalog()}
	g, err := gate.New(st, p, stepuptest.Passkeys(st), append([]gate.Option{gate.WithDwell(0)}, opts...)...)
	require.NoError(t, err)
	enroll, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKey(stepuptest.SealKey()))
	require.NoError(t, err)
	d := attackkit.NewDesk(g.Desk(), enroll, stepuptest.RP(), time.Now)
	_, err = d.Person(t.Context(), attackkit.User)
	require.NoError(t, err)
	tg := newLoop(g).target(d, nil)
	tg.ChangePolicy = p.change
	return tg
}

// TestInProcessGateOnPostgres runs the catalogue against the gate on
// store/postgres, the store of many replicas.
func TestInProcessGateOnPostgres(t *testing.T) {
	if os.Getenv("ASU_POSTGRES_DSN") == "" {
		t.Skip("PostgreSQL tests skipped: set ASU_POSTGRES_DSN (e.g. `source .ci/postgres.sh`) to run them")
	}
	rep := attackkit.Run(t, onPostgres)
	for _, r := range rep.Results {
		assert.NotEqual(t, attackkit.Broken, r.Outcome, "%s / %s: %s", r.Property, r.Attack, r.Detail)
	}
}
