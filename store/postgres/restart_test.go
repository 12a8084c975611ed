package postgres_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/process"
)

// cluster is a PostgreSQL server of one test's own, which it may stop
// abruptly without disturbing the tests that share the main one.
type cluster struct {
	dsn, dir, bin, owner string
}

// privateCluster starts a cluster with the repository's .ci/postgres.sh
// on a port of its own and stops it when t ends. It skips t where the
// PostgreSQL tests do not run or no server binaries are installed.
func privateCluster(t *testing.T) *cluster {
	t.Helper()
	dsn(t)
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "postgres.sh"))
	require.NoError(t, err)
	if _, err := os.Stat(script); err != nil {
		t.Skip("restart tests skipped: .ci/postgres.sh not found")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("restart tests skipped: no bash to start a private cluster")
	}
	// The shell keeps the cluster while its stdin is open; closing it ends
	// the shell, whose exit trap stops the cluster and removes its files.
	cmd := exec.Command("bash", "-c", `unset ASU_POSTGRES_DSN ASU_POSTGRES_DIR
source "$1" >&2 || exit 1
printf '%s\n%s\n%s\n%s\n' "$ASU_POSTGRES_DSN" "$ASU_POSTGRES_DIR" "$ASU_POSTGRES_BIN" "$ASU_POSTGRES_OWNER"
cat >/dev/null`, "cluster", script)
	cmd.Env = append(os.Environ(), "ASU_POSTGRES_PORT=56432")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	var got []string
	for len(got) < 4 && lines.Scan() {
		got = append(got, lines.Text())
	}
	if len(got) < 4 || got[0] == "" {
		t.Skip("restart tests skipped: a private PostgreSQL cluster could not be started")
	}
	return &cluster{dsn: got[0], dir: got[1], bin: got[2], owner: got[3]}
}

// restart stops the server the way a crash does (no checkpoint, clients
// cut off mid-statement) and starts it again, returning once it accepts
// connections.
func (c *cluster) restart(t *testing.T) {
	t.Helper()
	args := []string{filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(c.dir, "data"),
		"-l", filepath.Join(c.dir, "server.log"), "-m", "immediate", "-w", "-t", "60", "restart"}
	if os.Geteuid() == 0 && c.owner != "root" {
		args = append([]string{"runuser", "-u", c.owner, "--"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "pg_ctl restart: %s", out)
}

// TestProcessesAcrossRestart runs the replica kill campaign against a
// PostgreSQL server that is itself stopped with `pg_ctl restart -m
// immediate` mid-load.
func TestProcessesAcrossRestart(t *testing.T) {
	var c *cluster
	var schema string
	process.RunRestart(t, process.Backend{
		Create: func(t *testing.T) string {
			c = privateCluster(t)
			schema = newSchemaAt(t, c.dsn)
			return schema + " " + c.dsn
		},
		Open: func(t testing.TB, target string) store.Store {
			schema, d, _ := strings.Cut(target, " ")
			return openAt(t, d, schema)
		},
		Restart: func(t *testing.T) {
			before := startedAt(t, c.dsn)
			c.restart(t)
			after := startedAt(t, c.dsn)
			require.True(t, after.After(before), "the server restarted")
			// Load goes on after the restart: gates park new tickets.
			t.Cleanup(func() {
				s := openAt(t, c.dsn, schema)
				ts, _, err := s.List(context.Background(), store.Filter{Limit: store.MaxListLimit})
				require.NoError(t, err)
				later := 0
				for _, a := range ts {
					if a.CreatedAt.After(after) {
						later++
					}
				}
				assert.Positive(t, later, "tickets parked after the restart")
			})
		},
	})
}

// startedAt is when the server last started.
func startedAt(t *testing.T, d string) time.Time {
	t.Helper()
	var at time.Time
	require.NoError(t, withConn(d, func(conn *pgx.Conn) error {
		return conn.QueryRow(context.Background(), "SELECT pg_postmaster_start_time()").Scan(&at)
	}))
	return at
}

// withConn runs f on a connection of its own to d.
func withConn(d string, f func(*pgx.Conn) error) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return f(conn)
}
