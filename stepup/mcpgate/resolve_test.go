package mcpgate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

func TestPathResolverBinds(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o700))
	require.NoError(t, writeFile(root, "a.txt", "one"))
	r := mcpgate.PathResolver{Root: root, Base: root}
	ctx := context.Background()
	resolve := func(name string) (canon.Ref, error) {
		return r.Resolve(ctx, canon.Ref{Name: name, Kind: mcpgate.PathKind})
	}
	abs, err := resolve(filepath.Join(root, "a.txt"))
	require.NoError(t, err)
	rel, err := resolve("a.txt")
	require.NoError(t, err)
	assert.Equal(t, abs.SHA256, rel.SHA256)
	assert.EqualValues(t, 3, rel.Size)

	absent, err := resolve(filepath.Join(root, "sub", "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, mcpgate.AbsentDigest, absent.SHA256)
	assert.EqualValues(t, -1, absent.Size)
	require.NoError(t, writeFile(root, "empty.txt", ""))
	empty, err := resolve("empty.txt")
	require.NoError(t, err)
	assert.NotEqual(t, absent.SHA256, empty.SHA256, "an empty file is not an absent one")

	_, err = resolve("sub")
	assert.Error(t, err, "a directory is not bound")
	other, err := r.Resolve(ctx, canon.Ref{Name: "https://example.org", Kind: "url"})
	assert.ErrorIs(t, err, canon.ErrNotResolvable)
	assert.Zero(t, other)
}

// TestPathResolverConfines tries many spellings of a way out of the root;
// each is refused, so the call is denied rather than bound to a file the
// upstream server may not even be allowed to touch.
func TestPathResolverConfines(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	require.NoError(t, os.MkdirAll(root, 0o700))
	require.NoError(t, writeFile(parent, "secret.txt", "s"))
	require.NoError(t, os.Symlink(parent, filepath.Join(root, "link")))
	require.NoError(t, os.Symlink(filepath.Join(parent, "secret.txt"), filepath.Join(root, "secret-link")))
	r := mcpgate.PathResolver{Root: root, Base: root}
	escapes := []string{
		"../secret.txt", "./../secret.txt", "sub/../../secret.txt",
		filepath.Join(parent, "secret.txt"), root + "/../secret.txt", root + "x/secret.txt",
		"link/secret.txt", "link/new.txt", "secret-link", "/etc/passwd", "", "..",
	}
	for _, name := range escapes {
		_, err := r.Resolve(context.Background(), canon.Ref{Name: name, Kind: mcpgate.PathKind})
		assert.Error(t, err, "%q", name)
	}
	// The naive check, a prefix match on the cleaned absolute path, lets
	// a sibling directory whose name starts with the root's through.
	naive := func(name string) bool { return len(name) >= len(root) && name[:len(root)] == root }
	assert.True(t, naive(root+"x/secret.txt"), "the naive check would bind a sibling directory's file")
}
