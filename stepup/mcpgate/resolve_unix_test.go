//go:build unix

package mcpgate_test

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
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// TestPathResolverNeverWaitsOnAPipe: a path that is, or becomes, a named
// pipe (or a directory) is refused at once, never waited on: an agent that
// can write under the root cannot pin the gate's goroutines through
// Propose. Swapped repeatedly between a file and a pipe while resolving.
func TestPathResolverNeverWaitsOnAPipe(t *testing.T) {
	dir := t.TempDir()
	r := mcpgate.PathResolver{Root: dir, Base: dir}
	name := filepath.Join(dir, "q3.csv")
	for i := range 50 {
		_ = os.Remove(name)
		if i%2 == 0 {
			require.NoError(t, syscall.Mkfifo(name, 0o600))
		} else {
			require.NoError(t, os.WriteFile(name, []byte("region,revenue\n"), 0o600))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := r.Resolve(ctx, canon.Ref{Name: "q3.csv", Kind: mcpgate.PathKind})
			done <- err
		}()
		select {
		case err := <-done:
			if i%2 == 0 {
				assert.Error(t, err, "a pipe is not a file")
			} else {
				assert.NoError(t, err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("Resolve waited on a named pipe")
		}
		cancel()
	}
}
