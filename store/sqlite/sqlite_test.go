package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
	"github.com/agentstepup/asu/store/storetest"
	"github.com/agentstepup/asu/store/storetest/process"
)

func open(t testing.TB, path string) store.Store {
	s, err := sqlite.Open(t.Context(), path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestProcesses(t *testing.T) {
	process.Run(t, process.Backend{
		Create: func(t *testing.T) string { return filepath.Join(t.TempDir(), "asu.db") },
		Open:   open,
	})
}

func TestClock(t *testing.T) {
	storetest.RunClock(t, func(t *testing.T, clock func() time.Time) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "asu.db"), &sqlite.Options{Clock: clock})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestOpeningACurrentFileWaitsForNoWriter: a file already at this build's
// schema opens while another process holds its write lock, as a replica
// starting beside busy ones does; before, the open waited for the lock
// and failed after its busy timeout.
func TestOpeningACurrentFileWaitsForNoWriter(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "asu.db")
	first, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	require.NoError(t, first.Close())

	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(100)")
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)
	defer func() { _, _ = conn.ExecContext(context.Background(), `ROLLBACK`) }()

	s, err := sqlite.Open(ctx, path, &sqlite.Options{BusyTimeout: 200 * time.Millisecond})
	require.NoError(t, err, "a current file opened while another process writes")
	defer s.Close()
	_, err = s.Now(ctx)
	require.NoError(t, err)
}

// TestWritesCancelledAnywhereLeaveTheStoreWriting: writes whose context
// ends at random moments, the start of a transaction among them, on the
// durable and the relaxed connection, from several goroutines: each
// fails or commits, and every later write commits.
func TestWritesCancelledAnywhereLeaveTheStoreWriting(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "asu.db"))
	c := s.(store.Counters)
	w0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for i := range 400 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(300))*time.Microsecond)
				key := fmt.Sprintf("k%d/%d", g, i%7)
				if i%2 == 0 {
					_, _ = c.AddCount(ctx, key, w0, 1) // a relaxed commit
				} else {
					_, _ = c.IncrStreak(ctx, key, w0) // a durable one
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	ctx := context.Background()
	_, err := c.AddCount(ctx, "after", w0, 1)
	require.NoError(t, err, "a relaxed write after the cancellations")
	_, err = c.IncrStreak(ctx, "after", w0)
	require.NoError(t, err, "a durable write after the cancellations")
}
