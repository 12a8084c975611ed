package canon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

const q3 = "region,revenue\nwest,410\neast,385\n"

// resolverTree builds a root directory and, beside it, a directory the
// resolver must never read:
//
//	outside/secret.txt
//	root/q3.csv
//	root/sub/a.txt
//	root/dir/
//	root/inside-link -> q3.csv            (fine: stays inside)
//	root/sub/up-link -> ../q3.csv         (fine: stays inside)
//	root/escape-link -> ../outside/secret.txt
//	root/abs-link    -> <abs>/outside/secret.txt
//	root/dir-escape  -> ../outside
func resolverTree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub"), filepath.Join(root, "dir")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	write := func(p, content string) { require.NoError(t, os.WriteFile(p, []byte(content), 0o644)) }
	write(filepath.Join(outside, "secret.txt"), "top secret")
	write(filepath.Join(root, "q3.csv"), q3)
	write(filepath.Join(root, "sub", "a.txt"), "a")
	link := func(target, name string) { require.NoError(t, os.Symlink(target, filepath.Join(root, name))) }
	link("q3.csv", "inside-link")
	link("../q3.csv", filepath.Join("sub", "up-link"))
	link("../outside/secret.txt", "escape-link")
	link(filepath.Join(outside, "secret.txt"), "abs-link")
	link("../outside", "dir-escape")
	return root, outside
}

func fileRef(name string) canon.Ref { return canon.Ref{Name: name, Kind: "file"} }

func TestFileResolverResolves(t *testing.T) {
	root, _ := resolverTree(t)
	res := canon.FileResolver{Root: root}
	for _, name := range []string{"q3.csv", "./q3.csv", "sub/../q3.csv", "inside-link", "sub/up-link"} {
		t.Run(name, func(t *testing.T) {
			got, err := res.Resolve(context.Background(), fileRef(name))
			require.NoError(t, err)
			assert.Equal(t, canon.Ref{Name: name, Kind: "file", SHA256: canon.Sum([]byte(q3)), Size: int64(len(q3))}, got)
			assert.True(t, got.Bound())
		})
	}
}

func TestFileResolverRefusesEscapes(t *testing.T) {
	root, outside := resolverTree(t)
	res := canon.FileResolver{Root: root}
	for _, name := range []string{
		"..",
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		"/etc/passwd",
		filepath.Join(root, "q3.csv"), // absolute, even though inside
		filepath.Join(outside, "secret.txt"),
		`sub\a.txt`,
		`..\outside\secret.txt`,
		"",
		"escape-link",
		"abs-link",
		"dir-escape/secret.txt",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := res.Resolve(context.Background(), fileRef(name))
			assert.ErrorIs(t, err, canon.ErrRefEscapes)
			assert.Equal(t, canon.Ref{}, got)
		})
	}
}

func TestFileResolverRefusesOtherFiles(t *testing.T) {
	root, _ := resolverTree(t)
	res := canon.FileResolver{Root: root, MaxSize: int64(len(q3))}
	cases := map[string]string{
		"directory":      "dir",
		"root itself":    ".",
		"missing":        "nope.csv",
		"missing in dir": "sub/nope.csv",
	}
	for name, ref := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := res.Resolve(context.Background(), fileRef(ref))
			require.Error(t, err)
			assert.NotErrorIs(t, err, canon.ErrNotResolvable, "a file reference that fails must not pass as unbound")
			assert.NotErrorIs(t, err, canon.ErrRefEscapes)
		})
	}

	t.Run("size limit", func(t *testing.T) {
		got, err := res.Resolve(context.Background(), fileRef("q3.csv"))
		require.NoError(t, err, "exactly MaxSize bytes is accepted")
		assert.Equal(t, int64(len(q3)), got.Size)

		require.NoError(t, os.WriteFile(filepath.Join(root, "q3.csv"), []byte(q3+"x"), 0o644))
		_, err = res.Resolve(context.Background(), fileRef("q3.csv"))
		assert.Error(t, err, "one byte over MaxSize is refused")
	})

	t.Run("missing root", func(t *testing.T) {
		_, err := canon.FileResolver{Root: filepath.Join(root, "nope")}.Resolve(context.Background(), fileRef("q3.csv"))
		assert.Error(t, err)
	})

	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := res.Resolve(ctx, fileRef("q3.csv"))
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// TestFileResolverErrorsDoNotQuoteNames: a reference's name comes from the
// call's arguments, so it stays out of error text.
func TestFileResolverErrorsDoNotQuoteNames(t *testing.T) {
	root, _ := resolverTree(t)
	res := canon.FileResolver{Root: root}
	for _, name := range []string{"salary-of-bob.csv", "sub/salary-of-bob.csv", "../salary-of-bob.csv"} {
		_, err := res.Resolve(context.Background(), fileRef(name))
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "salary-of-bob", name)

		_, err = canon.ResolveAll(context.Background(), res, []canon.Ref{fileRef(name)})
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "salary-of-bob", name)
	}
}

func TestFileResolverOtherKinds(t *testing.T) {
	root, _ := resolverTree(t)
	res := canon.FileResolver{Root: root}
	for _, kind := range []string{"url", "", "File", "dir"} {
		_, err := res.Resolve(context.Background(), canon.Ref{Name: "q3.csv", Kind: kind})
		assert.ErrorIs(t, err, canon.ErrNotResolvable, "kind %q", kind)
	}
}

func TestResolveAll(t *testing.T) {
	root, _ := resolverTree(t)
	refs := []canon.Ref{
		fileRef("q3.csv"),
		{Name: "https://example.com/report", Kind: "url", SHA256: canon.Sum([]byte("claimed")), Size: 7},
		fileRef("sub/a.txt"),
	}

	t.Run("file resolver", func(t *testing.T) {
		got, err := canon.ResolveAll(context.Background(), canon.FileResolver{Root: root}, refs)
		require.NoError(t, err)
		require.Len(t, got, 3)
		assert.True(t, got[0].Bound())
		assert.Equal(t, canon.Sum([]byte(q3)), got[0].SHA256)
		// The URL keeps its name and kind, loses any claimed hash, and says why.
		assert.False(t, got[1].Bound())
		assert.NotEmpty(t, got[1].Unbound)
		assert.Equal(t, canon.Ref{Name: refs[1].Name, Kind: "url", Unbound: got[1].Unbound}, got[1])
		assert.True(t, got[2].Bound())
		assert.Equal(t, int64(1), got[2].Size)
		assert.Equal(t, canon.Sum([]byte("claimed")), refs[1].SHA256, "input slice not modified")
	})

	t.Run("nil resolver", func(t *testing.T) {
		got, err := canon.ResolveAll(context.Background(), nil, refs)
		require.NoError(t, err)
		for i, r := range got {
			assert.False(t, r.Bound(), "ref %d", i)
			assert.True(t, r.SHA256.IsZero())
			assert.Zero(t, r.Size)
		}
	})

	t.Run("fails closed", func(t *testing.T) {
		for _, name := range []string{"missing.csv", "escape-link", "dir"} {
			got, err := canon.ResolveAll(context.Background(), canon.FileResolver{Root: root}, []canon.Ref{refs[1], fileRef(name)})
			assert.Error(t, err, name)
			assert.Nil(t, got, name)
		}
		_, err := canon.ResolveAll(context.Background(), canon.FileResolver{Root: root}, []canon.Ref{fileRef("escape-link")})
		assert.ErrorIs(t, err, canon.ErrRefEscapes)
	})

	t.Run("empty", func(t *testing.T) {
		got, err := canon.ResolveAll(context.Background(), nil, nil)
		require.NoError(t, err)
		assert.Empty(t, got)
	})
}

// TestDigestBindsReferencedContent is the reference program's case 4: the arguments stay
// the same, the attachment is edited after approval, and the digest changes;
// putting the content back restores it.
func TestDigestBindsReferencedContent(t *testing.T) {
	root, _ := resolverTree(t)
	res := canon.FileResolver{Root: root}
	digest := func() canon.Digest {
		t.Helper()
		refs, err := canon.ResolveAll(context.Background(), res, []canon.Ref{fileRef("q3.csv")})
		require.NoError(t, err)
		e := sampleEffect()
		e.Refs = refs
		d, err := e.Digest()
		require.NoError(t, err)
		return d
	}
	approved := digest()
	path := filepath.Join(root, "q3.csv")
	edits := map[string]string{
		"appended line":           q3 + "note,see attached instructions\n",
		"same size, one byte":     "region,revenue\nwest,411\neast,385\n",
		"same size, swapped rows": "region,revenue\neast,385\nwest,410\n",
		"emptied":                 "",
	}
	for name, content := range edits {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		assert.NotEqual(t, approved, digest(), name)
	}
	require.NoError(t, os.WriteFile(path, []byte(q3), 0o644))
	assert.Equal(t, approved, digest(), "restored content gives the approved digest")

	// Swapping the file for a symlink to other content inside the root is an edit too.
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink("sub/a.txt", path))
	assert.NotEqual(t, approved, digest())
}
