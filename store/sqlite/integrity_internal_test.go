package sqlite

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// filled returns the path of a closed database holding a few hundred
// tickets and audit rows, enough to span many pages.
func filled(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "asu.db")
	s := openT(t, path, &Options{RelaxedSyncUnsafe: true})
	for n := 0; n < 200; n++ {
		a := storetest.Ticket("s1", "u1", n)
		a.Rationale = string(make([]byte, 2000))
		_, _, err := s.Park(t.Context(), a, store.Caps{}, func(store.Approval, bool) audit.Record {
			return storetest.Record("task", t0)
		})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	return path
}

// TestOpenRefusesDamagedFile damages a database in several ways and
// checks that Open refuses every damaged file with ErrCorrupt instead of
// opening a store that would approve while its tables cannot be read.
func TestOpenRefusesDamagedFile(t *testing.T) {
	damage := []struct {
		name string
		harm func(t *testing.T, path string)
	}{
		{"zeroed pages in the middle", func(t *testing.T, path string) {
			overwrite(t, path, 8*4096, make([]byte, 16*4096))
		}},
		{"garbage over the last pages", func(t *testing.T, path string) {
			info, err := os.Stat(path)
			require.NoError(t, err)
			junk := make([]byte, 8*4096)
			for i := range junk {
				junk[i] = byte(i*31 + 7)
			}
			overwrite(t, path, info.Size()-int64(len(junk)), junk)
		}},
		{"not a database", func(t *testing.T, path string) {
			overwrite(t, path, 0, []byte("this is not an SQLite file, only text...."))
		}},
		{"audit table dropped behind our back", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec(`DROP TABLE audit`)
			require.NoError(t, err)
		}},
	}
	unnoticed := 0 // damages that reading the schema version alone, as Open once did, lets through
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			path := filled(t)
			d.harm(t, path)
			if db, err := sql.Open("sqlite", path); err == nil {
				var v int
				if db.QueryRow(`SELECT version FROM schema_version`).Scan(&v) == nil {
					unnoticed++
				}
				_ = db.Close()
			}
			s, err := Open(t.Context(), path, nil)
			if err == nil {
				_ = s.Close()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrCorrupt)
		})
	}
	assert.Positive(t, unnoticed, "some damage passes a check of the schema version alone")
	t.Run("intact", func(t *testing.T) {
		s, err := Open(t.Context(), filled(t), nil)
		require.NoError(t, err, "an intact file opens")
		require.NoError(t, s.Close())
	})
}

// overwrite writes b at off in the file at path, and removes the WAL so
// that SQLite reads the damaged main file.
func overwrite(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
}

// TestMigrationFromVersion1 opens a file written by the first schema, with
// a ticket left executing by a crash, and checks that migration keeps every
// ticket and hands the executing one to lease recovery: fence 1, a lease
// that ended when it was consumed, its key unchanged.
func TestMigrationFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asu.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT`)
	require.NoError(t, err)
	_, err = db.Exec(migrations[0])
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO schema_version (version) VALUES (1)`)
	require.NoError(t, err)
	consumed := t0.Add(-time.Minute)
	for i, state := range []string{"pending", "executing", "done"} {
		a := storetest.Ticket("s1", "u1", i)
		_, err = db.Exec(`INSERT INTO approvals (id, state, effect, digest, tool, effect_class, card, card_hash,
			nonce, created_at, expires_at, requester, user, session, task, step, policy_version, taint, rationale,
			idempotency_key, consumed_at) VALUES (?, ?, ?, ?, 'pay', 'irreversible', NULL, ?, ?, ?, ?, '{}', 'u1',
			's1', 't', 's', 'v1', '[]', '', ?, ?)`, state, state, a.Effect, a.Digest[:], a.CardHash[:], a.Nonce[:],
			a.CreatedAt.UnixMicro(), a.ExpiresAt.UnixMicro(), "key-"+state, consumed.UnixMicro())
		require.NoError(t, err)
	}
	_, err = db.Exec(`INSERT INTO credentials (id, user, public_key, sign_count, backup_eligible, backup_state)
		VALUES (x'01', 'u1', x'02', 5, 0, 0)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s := openT(t, path, nil)
	for _, state := range []store.State{store.Pending, store.Executing, store.Done} {
		a, err := s.Get(t.Context(), string(state))
		require.NoError(t, err, state)
		assert.Equal(t, state, a.State)
	}
	x, err := s.Get(t.Context(), "executing")
	require.NoError(t, err)
	assert.Equal(t, int64(1), x.Fence)
	assert.True(t, consumed.Equal(x.LeaseUntil), "the lease ended when it was consumed")
	expired, err := s.Expired(t.Context(), t0.Add(time.Hour), 0)
	require.NoError(t, err)
	require.Len(t, expired, 1)
	assert.Equal(t, "executing", expired[0].ID)
	got, err := s.Reclaim(t.Context(), "executing", 1, store.Claim{Owner: "gate-2", At: t0, LeaseUntil: t0.Add(time.Minute)}, nil)
	require.NoError(t, err)
	assert.Equal(t, "key-executing", got.IdempotencyKey, "recovered with the same key")
	c, err := s.GetCredential(t.Context(), []byte{1})
	require.NoError(t, err)
	assert.True(t, c.RevokedAt.IsZero())
	assert.NoError(t, s.AdvanceSignCount(t.Context(), []byte{1}, 6))
	var v int
	require.NoError(t, s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v))
	assert.Equal(t, len(migrations), v)
}
