package sqlite_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
	"github.com/agentstepup/asu/store/storetest"
)

// noteOf records decision on the ticket, by id, so a test can find the
// rows of each ticket in a chain.
func noteOf(decision string) store.Note {
	return func(a store.Approval, merged bool) audit.Record {
		return audit.Record{TicketID: a.ID, Task: a.ID, Decision: decision, Reason: string(a.State)}
	}
}

// cycle takes ticket n through park, approve, consume and finish.
func cycle(ctx context.Context, s store.Store, n int) error {
	now, err := s.Now(ctx)
	if err != nil {
		return err
	}
	a, _, err := s.Park(ctx, storetest.TicketAt(fmt.Sprintf("s%d", n), "u1", n, now), store.Caps{}, noteOf("park"))
	if err != nil {
		return err
	}
	if a, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: "alice", At: now}, noteOf("approve")); err != nil {
		return err
	}
	claim := store.Claim{Key: "key-" + a.ID, Owner: "gate-1", At: now, LeaseUntil: now.Add(time.Minute)}
	if a, err = s.Consume(ctx, a.ID, claim, noteOf("consume")); err != nil {
		return err
	}
	_, err = s.Finish(ctx, a.ID, a.Fence, store.Outcome{State: store.Done, Result: []byte(`"ok"`), At: now}, noteOf("finish"))
	return err
}

// TestBackupUnderLoad takes backups while eight goroutines decide, and
// checks each backup: it opens (Open verifies the whole chain), Check
// finds it intact, its chain verifies from the first record, and every
// ticket in it has exactly the rows of the decisions it shows, no more
// and no fewer: a backup never holds a decision without its row or a row
// without its decision.
func TestBackupUnderLoad(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	require.NoError(t, err)
	defer s.Close()

	var next atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := cycle(ctx, s, int(next.Add(1))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var backups []string
	for i := range 4 {
		for next.Load() < int64(20*(i+1)) {
			time.Sleep(time.Millisecond)
		}
		path := filepath.Join(dir, fmt.Sprintf("backup-%d.db", i))
		require.NoError(t, s.Backup(ctx, path))
		backups = append(backups, path)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	want := map[store.State][]string{
		store.Pending: {"park"}, store.Approved: {"park", "approve"},
		store.Executing: {"park", "approve", "consume"}, store.Done: {"park", "approve", "consume", "finish"},
	}
	for _, path := range backups {
		b, err := sqlite.Open(ctx, path, nil)
		require.NoError(t, err, "a backup opens: its chain verifies at Open")
		report, err := b.Check(ctx)
		require.NoError(t, err)
		assert.False(t, report.Damaged(), "%s", report.Summary())
		chain, err := b.AuditSeq(ctx, 1, 1<<62)
		require.NoError(t, err)
		require.NoError(t, audit.VerifyChain(chain, canon.Digest{}))
		assert.Equal(t, int64(len(chain)), report.Records)
		rows := map[string][]string{}
		for _, r := range chain {
			rows[r.TicketID] = append(rows[r.TicketID], r.Decision)
		}
		tickets, _, err := b.List(ctx, store.Filter{Limit: 1000})
		require.NoError(t, err)
		require.NotEmpty(t, tickets)
		for _, a := range tickets {
			assert.Equal(t, want[a.State], rows[a.ID], "ticket %s, %s in the backup, has the rows of its decisions", a.ID, a.State)
			delete(rows, a.ID)
		}
		assert.Empty(t, rows, "no row without its ticket")
		require.NoError(t, b.Close())
	}
}

// TestBackupNeverOverwrites: a backup to an existing file, even an empty
// one, fails with fs.ErrExist and leaves the file as it was, and a failed
// backup leaves no temporary file behind.
func TestBackupNeverOverwrites(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	require.NoError(t, err)
	defer s.Close()
	for _, content := range []string{"", "precious"} {
		path := filepath.Join(dir, "existing-"+content)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		err := s.Backup(ctx, path)
		require.ErrorIs(t, err, fs.ErrExist)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, content, string(got))
	}
	require.NoError(t, s.Backup(ctx, filepath.Join(dir, "b.db")))
	assert.ErrorIs(t, s.Backup(ctx, filepath.Join(dir, "b.db")), fs.ErrExist, "a second backup to the same name")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, s.Backup(cancelled, filepath.Join(dir, "c.db")), context.Canceled)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"asu.db", "asu.db-wal", "asu.db-shm", "existing-", "existing-precious", "b.db"}, names,
		"no temporary file is left behind")
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Backup(ctx, filepath.Join(dir, "d.db")), store.ErrClosed)
}
