package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// openT opens path with opts, on a clock stopped at t0 unless opts sets
// one.
func openT(t *testing.T, path string, opts *Options) *Store {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Clock == nil {
		o.Clock = func() time.Time { return t0 }
	}
	s, err := Open(t.Context(), path, &o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// claim is a claim of key at t0, by gate-1, for a minute.
func claim(key string) store.Claim {
	return store.Claim{Key: key, Owner: "gate-1", At: t0, LeaseUntil: t0.Add(time.Minute)}
}

// approved parks and approves ticket n in s.
func approved(t *testing.T, s store.Store, n int) store.Approval {
	t.Helper()
	ctx := context.Background()
	a, _, err := s.Park(ctx, storetest.Ticket("s1", "u1", n), store.Caps{}, nil)
	require.NoError(t, err)
	a, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: "alice", At: t0}, nil)
	require.NoError(t, err)
	return a
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "asu.db")
	s := openT(t, path, nil)
	a := approved(t, s, 1)
	_, err := s.Consume(ctx, a.ID, claim("key"), nil)
	require.NoError(t, err)
	var v int
	require.NoError(t, s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v))
	assert.Equal(t, len(migrations), v)
	require.NoError(t, s.Close())

	s = openT(t, path, nil)
	got, err := s.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Executing, got.State, "reopening keeps the data and migrates nothing twice")
	var rows int
	require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&rows))
	assert.Equal(t, 1, rows)

	_, err = s.db.Exec(`UPDATE schema_version SET version = ?`, len(migrations)+1)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = Open(t.Context(), path, nil)
	require.Error(t, err, "a database from a newer build is refused")
	assert.Contains(t, err.Error(), "newer")
}

func TestOpenRefusesBadPaths(t *testing.T) {
	for _, path := range []string{"", ":memory:", "a.db?mode=ro", "a.db#x"} {
		_, err := Open(t.Context(), path, nil)
		assert.ErrorIs(t, err, store.ErrInvalid, "%q", path)
	}
}

// TestOpenRefusesOneConnection: a pool of one connection would hang the
// first transaction that prepares a statement (the migration's), so
// Open refuses it, naming the option; two open and work.
func TestOpenRefusesOneConnection(t *testing.T) {
	_, err := Open(t.Context(), filepath.Join(t.TempDir(), "asu.db"), &Options{MaxConns: 1})
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.ErrorContains(t, err, "MaxConns is 1")
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "asu.db"), &Options{MaxConns: 2})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// holdWriteLock takes the database's write lock from another connection,
// as another process would, until the returned function is called.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)
	return func() {
		_, _ = conn.ExecContext(ctx, `ROLLBACK`)
		_ = conn.Close()
		_ = db.Close()
	}
}

func TestLockWaitHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asu.db")
	s := openT(t, path, &Options{BusyTimeout: 2 * time.Second})
	a := approved(t, s, 1)
	release := holdWriteLock(t, path)

	// Two callers: one waits in SQLite's busy handler, the other on the
	// in-process writer queue. Both must give up when their context ends.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, errs[i] = s.Consume(ctx, a.ID, claim(fmt.Sprintf("key-%d", i)), nil)
		}()
	}
	wg.Wait()
	release()
	for _, err := range errs {
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	}
	got, err := s.Get(context.Background(), a.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Approved, got.State, "an abandoned consume leaves the ticket approved")
	_, err = s.Consume(context.Background(), a.ID, claim("key"), nil)
	assert.NoError(t, err)
}

func TestBusyTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asu.db")
	s := openT(t, path, &Options{BusyTimeout: 50 * time.Millisecond})
	a := approved(t, s, 1)
	release := holdWriteLock(t, path)
	defer release()
	_, err := s.Consume(context.Background(), a.ID, claim("key"), nil)
	require.Error(t, err, "a lock held past the busy timeout fails the call")
	for _, sentinel := range []error{store.ErrConsumed, store.ErrNotApproved, store.ErrClosed, store.ErrNotFound} {
		assert.False(t, errors.Is(err, sentinel), "a busy database is not %v", sentinel)
	}
}

// TestTwoHandles races two independent handles on one file in one process:
// they share no semaphore, so only SQLite's locking keeps single use.
func TestTwoHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "asu.db")
	h := []*Store{openT(t, path, nil), openT(t, path, nil)}
	a := approved(t, h[0], 1)
	var wg sync.WaitGroup
	errs := make([]error, 32)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h[i%2].Consume(ctx, a.ID, claim(fmt.Sprintf("key-%d", i)), nil)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			assert.ErrorIs(t, err, store.ErrConsumed)
		}
	}
	assert.Equal(t, 1, wins)
}

func TestErrorsQuoteNoValues(t *testing.T) {
	ctx := context.Background()
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
	a := storetest.Ticket("secret-session", "secret-user", 1)
	a.ID = "secret-id"
	_, _, err := s.Park(ctx, a, store.Caps{}, nil)
	require.NoError(t, err)
	b := storetest.Ticket("secret-session-2", "secret-user", 2)
	b.ID = "secret-id"
	_, _, errPark := s.Park(ctx, b, store.Caps{}, nil)
	require.ErrorIs(t, errPark, store.ErrDuplicate)
	_, errConsume := s.Consume(ctx, "secret-id", claim("secret-key"), nil)
	require.ErrorIs(t, errConsume, store.ErrNotApproved)
	_, errGet := s.Get(ctx, "secret-unknown")
	require.ErrorIs(t, errGet, store.ErrNotFound)
	for _, e := range []error{errPark, errConsume, errGet} {
		assert.NotContains(t, e.Error(), "secret")
	}
}
