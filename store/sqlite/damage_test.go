package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestConformance runs the suite, holding the SQLite store to reading back
// only what it wrote: the suite's rows are changed by an UPDATE through a
// second connection to the file, as any other writer could.
func TestConformance(t *testing.T) {
	var paths sync.Map // store.Store -> its file
	storetest.Run(t, func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), "asu.db")
		s := open(t, path)
		paths.Store(s, path)
		return s
	}, storetest.WithAuditTamper(func(t *testing.T, s store.Store, r audit.Record) {
		path, ok := paths.Load(s)
		require.True(t, ok)
		tamperAudit(t, path.(string), r)
	}))
}

// tamperAudit replaces the audit row r.Seq of the file at path with r,
// body and hash column both.
func tamperAudit(t *testing.T, path string, r audit.Record) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	defer db.Close()
	body, err := json.Marshal(r)
	require.NoError(t, err)
	res, err := db.Exec(`UPDATE audit SET body = ?, hash = ? WHERE seq = ?`, string(body), r.Hash[:], r.Seq)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// TestTicketRowThatDoesNotParse: a ticket row changed behind the store's
// back so that it no longer parses is damage, named by the ticket, and
// the store then refuses to decide.
func TestTicketRowThatDoesNotParse(t *testing.T) {
	for _, edit := range []string{
		`UPDATE approvals SET taint = 'not a list' WHERE id = ?`,
		`UPDATE approvals SET requester = '{' WHERE id = ?`,
		`UPDATE approvals SET votes = '[{"approver":17}]' WHERE id = ?`,
		`UPDATE approvals SET nonce = x'00' WHERE id = ?`,
		`UPDATE approvals SET state = 'apprxved' WHERE id = ?`,
	} {
		t.Run(edit, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "asu.db")
			s := open(t, path)
			now, err := s.Now(t.Context())
			require.NoError(t, err)
			a, _, err := s.Park(t.Context(), storetest.TicketAt("s1", "u1", 1, now), store.Caps{}, nil)
			require.NoError(t, err)
			db, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			// One connection, so the pragma holds for the edit: bit rot ignores
			// CHECK constraints too.
			db.SetMaxOpenConns(1)
			_, err = db.Exec(`PRAGMA ignore_check_constraints = ON`)
			require.NoError(t, err)
			_, err = db.Exec(edit, a.ID)
			require.NoError(t, err)
			require.NoError(t, db.Close())

			_, err = s.Get(t.Context(), a.ID)
			require.ErrorIs(t, err, store.ErrCorrupt)
			require.Contains(t, err.Error(), a.ID, "the error names the ticket")
			_, _, err = s.Park(t.Context(), storetest.TicketAt("s1", "u1", 2, now), store.Caps{}, nil)
			require.ErrorIs(t, err, store.ErrCorrupt, "the store refuses to decide")
			report, err := s.(store.Checker).Check(t.Context())
			require.NoError(t, err)
			require.True(t, report.Damaged())
			named := false
			for _, p := range report.Problems {
				named = named || p.Table == "approvals" && p.Key == a.ID
			}
			assert.True(t, named, "the report names the ticket: %+v", report.Problems)
		})
	}
}
