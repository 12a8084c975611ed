//go:build unix

package canon_test

import (
	"context"
	"os"
	"path/filepath"
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
			assert.Error(t, err, name)
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
