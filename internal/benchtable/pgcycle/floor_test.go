package pgcycle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFloorChains runs the floor's scripts at 8 clients and checks what
// makes them a floor of the gate's chain: every decision appended exactly
// one row, in one total order without a gap, each row linked to the one
// before and hashed over it, the head at the last row, and the other
// commits touched no chain.
func TestFloorChains(t *testing.T) {
	base := dsn(t)
	bin := pgbenchPath(t)
	for _, appendScript := range []string{"chain_append.sql", "chain_append_overlap.sql"} {
		t.Run(appendScript, func(t *testing.T) {
			ctx := context.Background()
			var rnd [8]byte
			_, _ = rand.Read(rnd[:])
			schema := "floortest_" + hex.EncodeToString(rnd[:])
			admin := connect(t, base)
			_, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
			require.NoError(t, err)
			t.Cleanup(func() {
				_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			})
			env := append(os.Environ(), "PGOPTIONS=-c search_path="+schema)
			run := func(name string, args ...string) {
				cmd := exec.Command(name, args...)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
			}
			run(psqlNext(bin), "-q", "-v", "ON_ERROR_STOP=1", "-f", script("chain_init.sql"), base)
			const clients, each = 8, 40
			run(bin, append(floorArgs(shape{commits: 7, decisions: 4, rowBytes: 300}, appendScript,
				[]string{"-c", "8", "-j", "2", "-t", "40"}), base)...)

			c := connect(t, withParams(t, base, "", "", map[string]string{"search_path": schema}))
			var decisions, others, rows, first, last, unlinked, misHashed int64
			require.NoError(t, c.QueryRow(ctx, `SELECT
					(SELECT coalesce(sum(n), 0) FROM floor_rows WHERE id < 512),
					(SELECT coalesce(sum(n), 0) FROM floor_rows WHERE id >= 512),
					count(*), coalesce(min(seq), 0), coalesce(max(seq), 0),
					count(*) FILTER (WHERE prev_hash IS DISTINCT FROM coalesce(
						(SELECT p.hash FROM floor_chain p WHERE p.seq = c.seq - 1), sha256(''::bytea))),
					count(*) FILTER (WHERE hash <> sha256(prev_hash || convert_to(body, 'UTF8')))
				FROM floor_chain c`).Scan(&decisions, &others, &rows, &first, &last, &unlinked, &misHashed))
			assert.EqualValues(t, clients*each, decisions+others, "every script ran")
			assert.Positive(t, decisions)
			assert.Positive(t, others)
			assert.Equal(t, decisions, rows, "one row per decision")
			assert.EqualValues(t, 1, first)
			assert.Equal(t, rows, last, "no gap in the order")
			assert.Zero(t, unlinked, "each row links to the one before")
			assert.Zero(t, misHashed, "each row hashes over its link and body")
			var headSeq int64
			var headIsLast bool
			require.NoError(t, c.QueryRow(ctx, `SELECT h.seq, h.hash = (SELECT hash FROM floor_chain WHERE seq = h.seq)
				FROM floor_head h`).Scan(&headSeq, &headIsLast))
			assert.Equal(t, last, headSeq)
			assert.True(t, headIsLast, "the head holds the last row's hash")
		})
	}
}

// TestTpsOf reads pgbench's figure and refuses output without it.
func TestTpsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		tps  float64
		err  error
	}{
		{"pgbench 15", "latency average = 3.609 ms\ninitial connection time = 112.514 ms\ntps = 4433.823286 (without initial connection time)\n", 4433.823286, nil},
		{"weighted scripts", "tps = 723.905084 (without initial connection time)\nSQL script 1: a.sql\n - 2101 transactions (57.2% of total, tps = 413.969674)\n", 723.905084, nil},
		{"aborted run", "pgbench: error: Run was aborted; the above results are incomplete.\n", 0, errNoTPS},
		{"empty", "", 0, errNoTPS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tpsOf([]byte(tc.out))
			require.ErrorIs(t, err, tc.err)
			assert.InDelta(t, tc.tps, got, 1e-9)
		})
	}
}
