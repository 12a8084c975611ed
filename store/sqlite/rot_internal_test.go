package sqlite

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// rotTemplate is a closed database with a few hundred audit rows of
// varied sizes and some tickets, its bytes, its page size and the pages
// of the audit table.
type rotTemplate struct {
	file     []byte
	pageSize int
	pages    []int64 // audit table pages (leaf and interior), 1-based
	rows     []auditRow
}

func buildRotTemplate(t *testing.T) rotTemplate {
	t.Helper()
	path := filepath.Join(t.TempDir(), "template.db")
	s := openT(t, path, &Options{RelaxedSyncUnsafe: true})
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 30 {
		a, _, err := s.Park(t.Context(), storetest.TicketAt("s1", "u1", n, t0), store.Caps{}, noted("park"))
		require.NoError(t, err)
		_, err = s.Resolve(t.Context(), a.ID, store.Resolution{To: store.Approved, Approver: "alice", At: t0}, noted("approve"))
		require.NoError(t, err)
	}
	for n := range 400 {
		r := storetest.Record(fmt.Sprintf("task-%d", n%17), t0)
		r.Reason = strings.Repeat("x", rng.IntN(300))
		_, err := s.AppendAudit(t.Context(), r)
		require.NoError(t, err)
	}
	var tpl rotTemplate
	rows, err := s.db.Query(`SELECT pageno FROM dbstat WHERE name = 'audit' ORDER BY pageno`)
	require.NoError(t, err)
	for rows.Next() {
		var p int64
		require.NoError(t, rows.Scan(&p))
		tpl.pages = append(tpl.pages, p)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, s.db.QueryRow(`PRAGMA page_size`).Scan(&tpl.pageSize))
	require.NoError(t, s.Close())
	tpl.file, err = os.ReadFile(path)
	require.NoError(t, err)
	tpl.rows = rawAuditRows(t, path)
	require.Len(t, tpl.rows, 460)
	require.Greater(t, len(tpl.pages), 10, "the audit table spans many pages")
	return tpl
}

func noted(decision string) store.Note {
	return func(a store.Approval, merged bool) audit.Record {
		return audit.Record{TicketID: a.ID, Task: a.Task, Decision: decision}
	}
}

// rawAuditRows reads every audit row of the file at path, bypassing the
// store, or nil when they cannot be read.
func rawAuditRows(t *testing.T, path string) []auditRow {
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT ` + auditRowCols + ` FROM audit ORDER BY seq`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var w auditRow
		if w.scan(rows) != nil {
			return nil
		}
		out = append(out, w)
	}
	if rows.Err() != nil {
		return nil
	}
	return out
}

// rot writes random bytes into the cell areas of one to three random
// audit pages of a copy of tpl's file, at least one byte different.
func (tpl rotTemplate) rot(rng *rand.Rand) []byte {
	file := bytes.Clone(tpl.file)
	for {
		for range 1 + rng.IntN(3) {
			page := tpl.pages[rng.IntN(len(tpl.pages))]
			off := int(page-1) * tpl.pageSize
			hdr := off
			if page == 1 {
				hdr += 100
			}
			start := int(binary.BigEndian.Uint16(file[hdr+5:]))
			if start == 0 {
				start = 65536
			}
			n := 1 + rng.IntN(48)
			at := start + rng.IntN(max(1, tpl.pageSize-start-n))
			for i := range n {
				if at+i < tpl.pageSize {
					file[off+at+i] = byte(rng.Uint32())
				}
			}
		}
		if !bytes.Equal(file, tpl.file) {
			return file
		}
	}
}

// TestRotInAuditPages writes random bytes into the cell areas of audit
// pages, seed after seed, and checks each damaged file: Open refuses it
// with ErrCorrupt, and Check, on the file opened for inspection, reports
// the damage; or the bytes changed nothing any row reads back (the rows
// are byte for byte the template's) and the store may keep deciding.
// Nothing panics. Before Open verified the chain, most of these files
// opened and kept deciding.
func TestRotInAuditPages(t *testing.T) {
	tpl := buildRotTemplate(t)
	seeds := 150
	if testing.Short() {
		seeds = 30
	}
	dir := t.TempDir()
	refused, harmless, openedBefore := 0, 0, 0
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		path := filepath.Join(dir, fmt.Sprintf("rot-%d.db", seed))
		require.NoError(t, os.WriteFile(path, tpl.rot(rng), 0o600))
		if quickCheckPasses(t, path) {
			openedBefore++
		}
		s, err := Open(t.Context(), path, &Options{Clock: func() time.Time { return t0 }})
		if err == nil {
			rows := rawAuditRows(t, path)
			require.Equal(t, tpl.rows, rows, "seed %d: Open accepted a file whose audit rows changed", seed)
			harmless++
			require.NoError(t, s.Close())
			continue
		}
		require.ErrorIs(t, err, ErrCorrupt, "seed %d", seed)
		refused++
		in, err := Open(t.Context(), path, &Options{Inspect: true})
		require.NoError(t, err, "seed %d: a damaged file opens for inspection", seed)
		report, err := in.Check(t.Context())
		require.NoError(t, err, "seed %d", seed)
		require.True(t, report.Damaged(), "seed %d: Check names the damage Open refused", seed)
		summary := report.Summary()
		assert.Contains(t, summary, "DAMAGED", "seed %d", seed)
		assert.Regexp(t, `audit seq \d+|file: |audit: `, summary, "seed %d: the summary says where", seed)
		_, _, err = in.Park(t.Context(), storetest.TicketAt("s9", "u9", 1, t0), store.Caps{}, noted("park"))
		assert.Error(t, err, "seed %d: a store opened for inspection decides nothing", seed)
		require.NoError(t, in.Close())
	}
	t.Logf("%d seeds: %d refused at Open, %d changed nothing that reads back; %d passed quick_check alone",
		seeds, refused, harmless, openedBefore)
	assert.Greater(t, refused, seeds/2, "most damage is refused")
	assert.Positive(t, openedBefore, "some damage passes quick_check alone, as in the report that found it")
}

// quickCheckPasses reports whether PRAGMA quick_check and a first-row
// read of each table, Open's checks before it verified the chain, pass on
// the file at path.
func quickCheckPasses(t *testing.T, path string) bool {
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var line string
	if db.QueryRow(`PRAGMA quick_check`).Scan(&line) != nil || line != "ok" {
		return false
	}
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM ` + table + ` LIMIT 1`)
		if err != nil {
			return false
		}
		for rows.Next() {
		}
		err = rows.Err()
		_ = rows.Close()
		if err != nil {
			return false
		}
	}
	return true
}

// TestRotWhileServing damages audit pages of a file a store has open and
// serves from, as a disk does, and checks that the damage is found by
// the next read of the chain (SQLite's own report of a malformed page,
// or a row that does not match its hash) and that from then on every
// deciding call refuses with ErrCorrupt; or that the bytes changed
// nothing a row reads back.
func TestRotWhileServing(t *testing.T) {
	tpl := buildRotTemplate(t)
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	dir := t.TempDir()
	found, harmless, bySQLite := 0, 0, 0
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		path := filepath.Join(dir, fmt.Sprintf("serving-%d.db", seed))
		require.NoError(t, os.WriteFile(path, tpl.file, 0o600))
		s, err := Open(t.Context(), path, &Options{Clock: func() time.Time { return t0 }})
		require.NoError(t, err)
		// Every read on a connection of its own, so none answers from a
		// page it cached before the damage.
		s.db.SetMaxIdleConns(0)
		s.closeStmts()
		require.NoError(t, os.WriteFile(path, tpl.rot(rng), 0o600))

		_, err = s.AuditSeq(t.Context(), 1, 1<<62)
		if err == nil {
			require.Equal(t, tpl.rows, rawAuditRows(t, path), "seed %d: a read accepted changed rows", seed)
			harmless++
			require.NoError(t, s.Close())
			continue
		}
		require.ErrorIs(t, err, store.ErrCorrupt, "seed %d: %v", seed, err)
		found++
		if strings.Contains(err.Error(), "malformed") {
			bySQLite++
		}
		_, _, err = s.Park(t.Context(), storetest.TicketAt("s9", "u9", 1, t0), store.Caps{}, noted("park"))
		require.ErrorIs(t, err, store.ErrCorrupt, "seed %d: the store refuses to decide", seed)
		_, err = s.Resolve(t.Context(), "nope", store.Resolution{To: store.Approved, Approver: "a", At: t0}, noted("approve"))
		require.ErrorIs(t, err, store.ErrCorrupt, "seed %d", seed)
		_, err = s.AppendAudit(t.Context(), storetest.Record("task", t0))
		require.ErrorIs(t, err, store.ErrCorrupt, "seed %d", seed)
		require.NoError(t, s.Close())
	}
	t.Logf("%d seeds: %d found on the next read (%d reported malformed by SQLite), %d changed nothing that reads back",
		seeds, found, bySQLite, harmless)
	assert.Greater(t, found, seeds/2)
	assert.Positive(t, bySQLite, "SQLite's own reports of damage count as damage")
	assert.Less(t, bySQLite, found, "and so do rows SQLite reads but do not match their hash")
}
