package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// synchronous reads the synchronous setting of the connection r's
// transaction runs on: 2 is FULL, 1 NORMAL.
func synchronous(ctx context.Context, r runner) (int, error) {
	var level int
	err := r.w.conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&level)
	return level, err
}

// poolLevels returns the synchronous setting of every connection of the
// pool that can be open at once (n): the one writes hold, and every
// other, held from the pool together.
func poolLevels(t *testing.T, s *Store, n int) []int {
	t.Helper()
	ctx := t.Context()
	var levels []int
	s.writer <- struct{}{}
	if c := s.durableConn.conn; c != nil {
		var level int
		require.NoError(t, c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&level))
		levels = append(levels, level)
		n--
	}
	<-s.writer
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := s.db.Conn(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
		var level int
		require.NoError(t, c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&level))
		levels = append(levels, level)
	}
	return levels
}

// relaxedOps are the store's relaxed writes, on fixtures seeded by
// seedRelaxed: the first showing of ticket n, a flood count, a sign
// count bump.
func relaxedOps(s *Store, ids []string) []func(ctx context.Context, n int) error {
	return []func(ctx context.Context, n int) error{
		func(ctx context.Context, n int) error {
			_, err := s.Show(ctx, ids[n%len(ids)], t0)
			return err
		},
		func(ctx context.Context, n int) error {
			_, err := s.AddCounts(ctx, []store.CountOp{{Key: fmt.Sprint("k", n%7), Window: t0, Delta: 1}})
			return err
		},
		func(ctx context.Context, n int) error {
			err := s.AdvanceSignCount(ctx, []byte("cred"), uint32(n+1))
			if errors.Is(err, store.ErrCounter) { // another goroutine's count got there first
				return nil
			}
			return err
		},
	}
}

// seedRelaxed parks n tickets and stores credential "cred".
func seedRelaxed(t *testing.T, s *Store, n int) []string {
	t.Helper()
	ctx := t.Context()
	var ids []string
	for i := range n {
		a, _, err := s.Park(ctx, storetest.Ticket(fmt.Sprint("s", i), "u1", i), store.Caps{}, nil)
		require.NoError(t, err)
		ids = append(ids, a.ID)
	}
	require.NoError(t, s.PutCredential(ctx, store.Credential{ID: []byte("cred"), User: "u1",
		PublicKey: []byte("key"), AAGUID: make([]byte, 16), CreatedAt: t0, Seal: []byte("seal")}))
	return ids
}

// TestRelaxedWritesLeaveNoConnectionRelaxed: relaxed writes (showings,
// flood counts) racing durable ones (sign counts among them) and reads never lend a
// relaxed connection to a durable write: every durable write's
// transaction runs at synchronous=FULL, every relaxed one at NORMAL, and
// afterwards every connection in the pool is back at FULL.
func TestRelaxedWritesLeaveNoConnectionRelaxed(t *testing.T) {
	ctx := t.Context()
	const conns = 4
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), &Options{MaxConns: conns})
	ids := seedRelaxed(t, s, 8)
	ops := relaxedOps(s, ids)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 6 {
		wg.Go(func() {
			for i := range 30 {
				var err error
				switch (g + i) % 4 {
				case 0: // a durable write that reports its connection's setting
					err = s.write(ctx, "probe", func(tx runner) error {
						level, err := synchronous(ctx, tx)
						if err == nil && level != 2 {
							err = fmt.Errorf("a durable write ran at synchronous=%d", level)
						}
						return err
					})
				case 1: // a relaxed write that does the same
					err = s.writeRelaxed(ctx, "probe", func(tx runner) error {
						level, err := synchronous(ctx, tx)
						if err == nil && level != 1 {
							err = fmt.Errorf("a relaxed write ran at synchronous=%d", level)
						}
						return err
					})
				case 2:
					_, err = s.Get(ctx, ids[i%len(ids)])
				default:
					err = ops[i%len(ops)](ctx, g*100+i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, []int{2, 2, 2, 2}, poolLevels(t, s, conns))
}

// TestRelaxedWriteFailures: a relaxed write that fails, is refused, or
// panics leaves every pooled connection at synchronous=FULL and the
// relaxed connection free for the next relaxed write (a transaction left
// open on it would hold the next one up for ever).
func TestRelaxedWriteFailures(t *testing.T) {
	ctx := t.Context()
	const conns = 2
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), &Options{MaxConns: conns})
	ids := seedRelaxed(t, s, 1)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"added", func() error {
			_, err := s.AddCounts(ctx, []store.CountOp{{Key: "k", Window: t0, Delta: 5}})
			return err
		}},
		{"refused", func() error {
			return s.writeRelaxed(ctx, "refused", func(runner) error { return store.ErrNotFound })
		}},
		{"database error", func() error {
			return s.writeRelaxed(ctx, "bad", func(tx runner) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO no_such_table VALUES (1)`)
				return dbErr(err)
			})
		}},
		{"panic", func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panicked: %v", r)
				}
			}()
			return s.writeRelaxed(ctx, "panic", func(runner) error { panic("inside a relaxed write") })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if c.name == "added" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			assert.Equal(t, []int{2, 2}, poolLevels(t, s, conns))
		})
	}
	// The store still works and what was committed is there.
	done := make(chan error, 1)
	go func() { _, err := s.Show(ctx, ids[0], t0); done <- err }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the relaxed connection was not given back")
	}
	n, err := s.AddCount(ctx, "k", t0, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(5), n)
}

// TestRelaxedUnsafeComposes: with Options.RelaxedSyncUnsafe every write
// runs at NORMAL, and none counts as durable.
func TestRelaxedUnsafeComposes(t *testing.T) {
	ctx := t.Context()
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), &Options{RelaxedSyncUnsafe: true, MaxConns: 2})
	for _, w := range []func(context.Context, string, func(runner) error) error{s.write, s.writeRelaxed} {
		require.NoError(t, w(ctx, "probe", func(tx runner) error {
			level, err := synchronous(ctx, tx)
			if err == nil && level != 1 {
				err = fmt.Errorf("synchronous=%d", level)
			}
			return err
		}))
	}
	assert.Equal(t, []int{1, 1}, poolLevels(t, s, 2))
	assert.Zero(t, s.durable.Load())
	assert.Positive(t, s.commits.Load())
}

// The environment of TestRelaxedWritesSurviveKill's child process.
const (
	envKillPath = "ASU_SQLITE_KILL_PATH" // the database file
	envKillLast = "ASU_SQLITE_KILL_LAST" // "relaxed" or "durable": what the child writes last
)

// TestRelaxedWritesSurviveKill: a process killed (SIGKILL, no Close)
// after its relaxed writes keeps them all, whether a durable commit
// followed them or not: a commit that has returned is in the WAL file,
// which the operating system keeps when the process dies. Only a power
// loss or an operating-system crash can undo relaxed commits, and only
// those no durable commit followed (see the package doc).
func TestRelaxedWritesSurviveKill(t *testing.T) {
	if path := os.Getenv(envKillPath); path != "" {
		relaxedChild(t, path, os.Getenv(envKillLast))
		return
	}
	for _, last := range []string{"durable", "relaxed"} {
		t.Run(last+" last", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "asu.db")
			cmd := exec.Command(os.Args[0], "-test.run", "^TestRelaxedWritesSurviveKill$", "-test.count", "1")
			cmd.Env = append(os.Environ(), envKillPath+"="+path, envKillLast+"="+last)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			lines := bufio.NewScanner(out)
			ready := false
			for lines.Scan() {
				if lines.Text() == "relaxed: written" {
					ready = true
					break
				}
			}
			require.True(t, ready, "the child did not write")
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait() // killed: no clean exit

			s := openT(t, path, nil)
			a, err := s.Get(t.Context(), "kill-ticket")
			require.NoError(t, err)
			assert.Equal(t, t0.Add(time.Second), a.ShownAt)
			n, err := s.AddCount(t.Context(), "kill-count", t0, 0)
			require.NoError(t, err)
			assert.Equal(t, int64(3), n)
			c, err := s.GetCredential(t.Context(), []byte("cred"))
			require.NoError(t, err)
			assert.Equal(t, uint32(9), c.SignCount)
			if last == "durable" {
				assert.Equal(t, store.Approved, a.State)
			}
		})
	}
}

// relaxedChild is the child of TestRelaxedWritesSurviveKill: it writes,
// says so, and waits to be killed.
func relaxedChild(t *testing.T, path, last string) {
	ctx := context.Background()
	s, err := Open(ctx, path, &Options{Clock: func() time.Time { return t0 }})
	require.NoError(t, err)
	seedRelaxed(t, s, 0)
	a := storetest.Ticket("s1", "u1", 1)
	a.ID = "kill-ticket"
	_, _, err = s.Park(ctx, a, store.Caps{}, nil)
	require.NoError(t, err)
	_, err = s.Show(ctx, a.ID, t0.Add(time.Second))
	require.NoError(t, err)
	_, err = s.AddCounts(ctx, []store.CountOp{{Key: "kill-count", Window: t0, Delta: 3}})
	require.NoError(t, err)
	require.NoError(t, s.AdvanceSignCount(ctx, []byte("cred"), 9))
	if last == "durable" {
		_, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: "alice", At: t0}, nil)
		require.NoError(t, err)
	}
	fmt.Println("relaxed: written")
	time.Sleep(time.Minute) // killed before this ends
	t.Fatal("not killed")
}
