//go:build unix

package canon_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// TestFileResolverRefusesFIFO: opening a named pipe for reading blocks until
// a writer appears, so a FIFO planted under the root must be refused without
// being opened.
func TestFileResolverRefusesFIFO(t *testing.T) {
	root, _ := resolverTree(t)
	fifo := filepath.Join(root, "pipe.csv")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Symlink("pipe.csv", filepath.Join(root, "pipe-link")))

	for _, name := range []string{"pipe.csv", "pipe-link"} {
		done := make(chan error, 1)
		go func() {
			_, err := canon.FileResolver{Root: root}.Resolve(context.Background(), fileRef(name))
			done <- err
		}()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, canon.ErrNotRegular, name)
		case <-time.After(10 * time.Second):
			// Unblock the resolver so the goroutine ends, then fail.
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			<-done
			t.Fatalf("%s: Resolve blocked on a FIFO", name)
		}
	}
}

// TestFileResolverFIFOSwapRace: an agent that can write under the root
// swaps a file for a named pipe (and a directory, and a socket) and back,
// as fast as it can, while references to it resolve concurrently. Every
// Resolve returns, with the file's hash or a refusal, before a deadline;
// no goroutine and no descriptor is left behind.
func TestFileResolverFIFOSwapRace(t *testing.T) {
	root, _ := resolverTree(t)
	name := filepath.Join(root, "swap.csv")
	require.NoError(t, os.WriteFile(name, []byte(q3), 0o644))
	want, err := canon.FileResolver{Root: root}.Resolve(t.Context(), fileRef("swap.csv"))
	require.NoError(t, err)
	goroutines := runtime.NumGoroutine()
	fds := openFDs(t)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { // the attacker
		tmp := filepath.Join(root, "tmp")
		for i := 0; !stop.Load(); i++ {
			os.RemoveAll(tmp)
			switch i % 4 {
			case 0:
				os.WriteFile(tmp, []byte(q3), 0o644)
			case 1, 3:
				syscall.Mkfifo(tmp, 0o644)
			case 2:
				if l, err := net.Listen("unix", tmp); err == nil {
					l.(*net.UnixListener).SetUnlinkOnClose(false)
					l.Close()
				} else {
					os.Mkdir(tmp, 0o755)
				}
			}
			if os.Rename(tmp, name) != nil { // a directory cannot replace a file
				os.RemoveAll(name)
				os.Rename(tmp, name)
			}
			swaps.Add(1)
		}
	})
	var resolved, refused atomic.Int64
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				got, err := canon.ResolveAll(ctx, canon.FileResolver{Root: root}, []canon.Ref{fileRef("swap.csv")})
				switch {
				case err == nil:
					assert.Equal(t, want, got[0], "a resolved swap.csv is the regular file")
					resolved.Add(1)
				case ctx.Err() != nil:
				default:
					refused.Add(1)
				}
			}
		})
	}
	time.Sleep(time.Second)
	stop.Store(true)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		// Give any blocked open a writer so the test ends, then fail.
		if w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("Resolve blocked while a file was swapped for a FIFO")
	}
	t.Logf("%d swaps, %d resolved, %d refused", swaps.Load(), resolved.Load(), refused.Load())
	assert.Positive(t, swaps.Load())
	assert.Positive(t, resolved.Load()+refused.Load())
	for end := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines leaked")
	assert.LessOrEqual(t, openFDs(t), fds, "descriptors leaked")
}

// openFDs counts this process's open descriptors, or -1 where that cannot
// be read.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", os.Getpid()))
	if err != nil {
		return -1
	}
	return len(ents)
}

// slowCtx reports cancellation from its n-th look on: it stands for a
// deadline that passes while a large file is read.
type slowCtx struct {
	context.Context
	looks atomic.Int64
	n     int64
}

func (c *slowCtx) Err() error {
	if c.looks.Add(1) >= c.n {
		return context.Canceled
	}
	return nil
}

// TestFileResolverHonoursContextWhileReading: the context is checked
// between chunks, so a cancellation stops a long read.
func TestFileResolverHonoursContextWhileReading(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.bin"), make([]byte, 4<<20), 0o644))
	_, err := canon.FileResolver{Root: root}.Resolve(&slowCtx{Context: t.Context(), n: 4}, fileRef("big.bin"))
	assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
	got, err := canon.FileResolver{Root: root}.Resolve(t.Context(), fileRef("big.bin"))
	require.NoError(t, err)
	assert.Equal(t, int64(4<<20), got.Size)
}

// TestFileResolverRefusesSocketAndDirectory checks the other kinds of
// file the descriptor check refuses.
func TestFileResolverRefusesSocketAndDirectory(t *testing.T) {
	root := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(root, "s.sock"))
	if err != nil {
		t.Skip("no unix sockets here")
	}
	defer l.Close()
	require.NoError(t, os.Mkdir(filepath.Join(root, "d"), 0o755))
	for _, n := range []string{"s.sock", "d"} {
		_, err := canon.FileResolver{Root: root}.Resolve(t.Context(), fileRef(n))
		assert.ErrorIs(t, err, canon.ErrNotRegular, n)
	}
}
