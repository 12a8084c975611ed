package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/sqlite"
)

// gatewayDB writes a closed SQLite store holding n audit records.
func gatewayDB(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "asu.db")
	s, err := sqlite.Open(t.Context(), path, nil)
	require.NoError(t, err)
	for i := range n {
		_, err := s.AppendAudit(t.Context(), audit.Record{Task: fmt.Sprintf("task-%d", i%5),
			Decision: audit.DecisionDeny, Reason: "unknown tool"})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	return path
}

// TestBackupCommand: backup prints one line naming the copy and its
// head, the copy opens and checks intact, and a second backup to the same
// name is refused and leaves it as it was.
func TestBackupCommand(t *testing.T) {
	db := gatewayDB(t, 12)
	to := filepath.Join(t.TempDir(), "backup.db")
	var out bytes.Buffer
	require.NoError(t, cli(t.Context(), []string{"backup", "-db", db, "-to", to}, &out, &out))
	assert.Regexp(t, `^backup of .* written to .*backup.db: \d+ bytes, audit head seq 12 \([0-9a-f]{64}\)\n$`, out.String())
	before, err := os.ReadFile(to)
	require.NoError(t, err)

	out.Reset()
	require.NoError(t, cli(t.Context(), []string{"integrity", "-db", to}, &out, &out), out.String())
	assert.Contains(t, out.String(), "12 audit records (head seq 12)")
	assert.Contains(t, out.String(), "intact")

	err = cli(t.Context(), []string{"backup", "-db", db, "-to", to}, &out, &out)
	require.Error(t, err, "never overwrites")
	after, err := os.ReadFile(to)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.Error(t, cli(t.Context(), []string{"backup", "-db", filepath.Join(t.TempDir(), "none.db"), "-to", to + "2"}, &out, &out),
		"never backs up a database it would create")
	assert.Error(t, cli(t.Context(), []string{"backup", "-db", db}, &out, &out), "-to is required")
}

// damages are ways an operator or the disk changes one audit row behind
// the store's back, by its seq.
var damages = []struct {
	name string
	sql  string
}{
	{"body edited", `UPDATE audit SET body = replace(body, 'unknown tool', 'known tool') WHERE seq = ?`},
	{"hash column changed", `UPDATE audit SET hash = zeroblob(32) WHERE seq = ?`},
	{"body garbled", `UPDATE audit SET body = substr(body, 1, 40) WHERE seq = ?`},
	{"row deleted", `DELETE FROM audit WHERE seq = ?`},
	{"seq moved", `UPDATE audit SET seq = seq + 1000 WHERE seq = ?`},
}

// TestIntegrityCommandNamesTheDamage damages one audit row of a store,
// by each kind of damage, at generated positions, and checks that the
// integrity command fails, names the damaged seq and says what to do,
// and that the gateway's store refuses to open the file.
func TestIntegrityCommandNamesTheDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	clean := gatewayDB(t, 40)
	template, err := os.ReadFile(clean)
	require.NoError(t, err)
	for _, d := range damages {
		for range 4 {
			seq := 1 + rng.IntN(39) // not the head: a deleted head leaves a shorter chain that looks whole
			t.Run(fmt.Sprintf("%s at %d", d.name, seq), func(t *testing.T) {
				db := filepath.Join(t.TempDir(), "asu.db")
				require.NoError(t, os.WriteFile(db, template, 0o600))
				raw, err := sql.Open("sqlite", db)
				require.NoError(t, err)
				_, err = raw.Exec(d.sql, seq)
				require.NoError(t, err)
				require.NoError(t, raw.Close())

				var out bytes.Buffer
				err = cli(context.Background(), []string{"integrity", "-db", db}, &out, &out)
				require.ErrorIs(t, err, errDamaged)
				assert.Contains(t, out.String(), "DAMAGED")
				assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`audit seq (%d|%d-\d+|\d+-%d)\b`, seq, seq, seq)), out.String(),
					"the summary names seq %d", seq)
				assert.Contains(t, out.String(), "what to do")
				assert.Contains(t, out.String(), "restore the newest backup")

				_, err = sqlite.Open(context.Background(), db, nil)
				assert.ErrorIs(t, err, sqlite.ErrCorrupt, "the gateway does not open it")

				out.Reset()
				err = cli(context.Background(), []string{"integrity", "-db", db, "-json"}, &out, &out)
				require.ErrorIs(t, err, errDamaged)
				var report store.Report
				require.NoError(t, json.Unmarshal(out.Bytes(), &report), "-json prints the report alone")
				require.True(t, report.Damaged())
				named := false
				for _, p := range report.Problems {
					named = named || p.Table == "audit" && p.FromSeq <= int64(seq) && int64(seq) <= p.ToSeq
				}
				assert.True(t, named, "the report names seq %d: %+v", seq, report.Problems)
			})
		}
	}
}

// TestIntegrityCommandNamesRot writes random bytes into the cell areas
// of random audit pages (found with SQLite's dbstat) of a gateway's
// file, seed after seed, and checks that the integrity command fails on
// each, says where (an audit seq range, or the page of the file) and
// what to do, and never panics.
func TestIntegrityCommandNamesRot(t *testing.T) {
	clean := gatewayDB(t, 300)
	template, err := os.ReadFile(clean)
	require.NoError(t, err)
	raw, err := sql.Open("sqlite", clean)
	require.NoError(t, err)
	var pageSize int
	require.NoError(t, raw.QueryRow(`PRAGMA page_size`).Scan(&pageSize))
	rows, err := raw.Query(`SELECT pageno FROM dbstat WHERE name = 'audit'`)
	require.NoError(t, err)
	var pages []int
	for rows.Next() {
		var p int
		require.NoError(t, rows.Scan(&p))
		pages = append(pages, p)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, raw.Close())
	require.Greater(t, len(pages), 3)
	for seed := range 12 {
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		file := bytes.Clone(template)
		page := pages[rng.IntN(len(pages))]
		off := (page - 1) * pageSize
		hdr := off
		if page == 1 {
			hdr += 100
		}
		start := int(file[hdr+5])<<8 | int(file[hdr+6])
		at := off + start + rng.IntN(max(1, pageSize-start-32))
		for i := range 32 {
			file[at+i] ^= byte(1 + rng.IntN(255)) // every byte changes
		}
		db := filepath.Join(t.TempDir(), "asu.db")
		require.NoError(t, os.WriteFile(db, file, 0o600))
		var out bytes.Buffer
		err := cli(context.Background(), []string{"integrity", "-db", db}, &out, &out)
		require.ErrorIs(t, err, errDamaged, "seed %d:\n%s", seed, out.String())
		assert.Regexp(t, `audit seq \d+|file: |audit: `, out.String(), "seed %d: says where", seed)
		assert.Contains(t, out.String(), "what to do", "seed %d", seed)
	}
}

// TestIntegrityCommandUsage: one store, named once.
func TestIntegrityCommandUsage(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{"integrity"}, {"integrity", "-db", "a", "-postgres", "b"}, {"integrity", "-db", "a", "extra"}} {
		assert.Error(t, cli(t.Context(), args, &out, &out), "%q", args)
	}
	assert.Error(t, cli(t.Context(), []string{"integrity", "-db", filepath.Join(t.TempDir(), "none.db")}, &out, &out),
		"never creates a database")
}

// TestIntegrityCommandPostgres checks a PostgreSQL store: intact, then
// with one audit row edited behind its back. It runs when
// ASU_POSTGRES_DSN names a database it may write to, in a schema of its
// own that it drops.
func TestIntegrityCommandPostgres(t *testing.T) {
	dsn := os.Getenv("ASU_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("ASU_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("asu_integrity_%d", rand.Uint64())
	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	for i := range 5 {
		_, err := st.AppendAudit(ctx, audit.Record{Task: fmt.Sprint(i), Decision: audit.DecisionDeny, Reason: "unknown tool"})
		require.NoError(t, err)
	}
	require.NoError(t, st.Close())
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	inSchema := dsn + sep + "search_path=" + schema

	var out bytes.Buffer
	require.NoError(t, cli(ctx, []string{"integrity", "-postgres", inSchema}, &out, &out), out.String())
	assert.Contains(t, out.String(), "5 audit records (head seq 5)")
	assert.NotContains(t, out.String(), dsn, "the DSN may hold a password")

	conn, err := pgx.Connect(ctx, inSchema)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `UPDATE audit SET reason = 'known tool' WHERE seq = 3`)
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))
	out.Reset()
	err = cli(ctx, []string{"integrity", "-postgres", inSchema}, &out, &out)
	require.ErrorIs(t, err, errDamaged)
	assert.Contains(t, out.String(), "audit seq 3: content does not match its hash")
}
