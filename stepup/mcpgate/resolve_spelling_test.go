//go:build unix

package mcpgate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// spellingTree is a served directory P with the gateway's root P/root
// inside it, the server's home P/root/home, and names that tempt a
// byte-for-byte resolver: an NFC file and directory, a symbolic link in
// and one out, a file outside the root.
type spellingTree struct {
	served, root, home string
	r                  mcpgate.PathResolver
}

func newSpellingTree(t testing.TB) spellingTree {
	t.Helper()
	served, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(served, "root")
	home := filepath.Join(root, "home")
	for _, d := range []string{home, filepath.Join(root, "caf\u00e9"), filepath.Join(root, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	for name, body := range map[string]string{
		"root/home/home_target.txt":       "home target",
		"root/r\u00e9sum\u00e9.txt":       "resume",
		"root/caf\u00e9/menu.txt":         "menu",
		"root/real.txt":                   "real",
		"root/Mixed.txt":                  "mixed",
		"secret.txt":                      "secret",
		"root/sub/inner.txt":              "inner",
		"root/two/r\u00e9sum\u00e9.txt":   "nfc",
		"root/two/re\u0301sume\u0301.txt": "nfd",
	} {
		p := filepath.Join(served, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "real.txt"), filepath.Join(root, "link.txt")))
	require.NoError(t, os.Symlink(filepath.Join(served, "secret.txt"), filepath.Join(root, "out.txt")))
	require.NoError(t, os.Symlink(served, filepath.Join(root, "up")))
	require.NoError(t, os.Symlink(filepath.Join(root, "gone"), filepath.Join(root, "dangling.txt")))
	return spellingTree{served: served, root: root, home: home,
		r: mcpgate.PathResolver{Root: root, Base: served, Home: home}}
}

func (s spellingTree) resolve(name string) (canon.Ref, error) {
	return s.r.Resolve(context.Background(), canon.Ref{Name: name, Kind: mcpgate.PathKind})
}

// TestPathResolverResolvesAsTheServer: each spelling the filesystem server
// expands, normalizes or follows binds the object the server touches,
// and the reference names it in Target; the byte-for-byte reading of the
// same names (what the resolver did before) finds nothing there and
// would have bound "absent" while the server overwrote a file.
func TestPathResolverResolvesAsTheServer(t *testing.T) {
	s := newSpellingTree(t)
	for name, want := range map[string]string{
		"~/home_target.txt":                 "root/home/home_target.txt",
		"~/../r\u00e9sum\u00e9.txt":         "root/r\u00e9sum\u00e9.txt",
		"~//home_target.txt":                "root/home/home_target.txt",
		"root/re\u0301sume\u0301.txt":       "root/r\u00e9sum\u00e9.txt",
		"root/cafe\u0301/menu.txt":          "root/caf\u00e9/menu.txt",
		"root/./sub/../real.txt":            "root/real.txt",
		"root/link.txt":                     "root/real.txt",
		"root/up/root/real.txt":             "root/real.txt",
		"root/sub/inner.txt/":               "root/sub/inner.txt",
		"ROOT_ABS/re\u0301sume\u0301.txt":   "root/r\u00e9sum\u00e9.txt",
		"ROOT_ABS/cafe\u0301/new.txt":       "root/caf\u00e9/new.txt",
		"ROOT_ABS/sub//new.txt":             "root/sub/new.txt",
		"~/new.txt":                         "root/home/new.txt",
		"root/two/r\u00e9sum\u00e9.txt":     "root/two/r\u00e9sum\u00e9.txt",
		"root/two/re\u0301sume\u0301.txt":   "root/two/re\u0301sume\u0301.txt",
		"root/\uff52\uff45\uff41\uff4c.txt": "root/\uff52\uff45\uff41\uff4c.txt", // full width: another name
		"root/mixed.txt":                    "root/mixed.txt",                    // another name here
	} {
		name = strings.Replace(name, "ROOT_ABS", s.root, 1)
		got, err := s.resolve(name)
		if !assert.NoError(t, err, "%q", name) {
			continue
		}
		target := filepath.Join(s.served, want)
		wantTarget := target
		if name == target {
			wantTarget = ""
		}
		assert.Equal(t, wantTarget, got.Target, "%q", name)
		if b, err := os.ReadFile(target); err == nil {
			assert.Equal(t, canon.Sum(b), got.SHA256, "%q binds the content of %s", name, want)
			assert.EqualValues(t, len(b), got.Size)
		} else {
			assert.Equal(t, mcpgate.AbsentDigest, got.SHA256, "%q", name)
			assert.EqualValues(t, -1, got.Size)
		}
	}

	// The attack, against the byte-for-byte reading: the literal name
	// under the root does not exist, so it bound "absent".
	naive := canon.FileResolver{Root: s.root}
	for _, name := range []string{"~/home_target.txt", "re\u0301sume\u0301.txt", "cafe\u0301/menu.txt"} {
		_, err := naive.Resolve(context.Background(), canon.Ref{Name: name, Kind: "file"})
		assert.ErrorIs(t, err, os.ErrNotExist, "the naive reading finds nothing at %q, and bound it as absent", name)
	}
}

// TestPathResolverRefusesWhatItCannotPin: names the resolver cannot pin
// to one object the way the server will, or whose object lies outside the
// root, are refused; none is bound as absent.
func TestPathResolverRefusesWhatItCannotPin(t *testing.T) {
	s := newSpellingTree(t)
	outside := []string{
		"secret.txt", "~/../../secret.txt", "root/out.txt", "root/up/secret.txt",
		"root/../secret.txt", "ROOT_ABS/../escape.txt", "~/../../escape-home.txt", "/etc/passwd",
		"ROOT_ABS", "ROOT_ABS/up/new.txt", "/",
		"\uff5e/home_target.txt", // a full-width tilde is a name, relative to the served directory
	}
	unresolvable := []string{
		"", "../x", " root/real.txt", "root/real.txt ", "root/real.txt\u00a0", "\ufeffroot/real.txt",
		"'root/real.txt'", "\"root/real.txt", "root/real.txt'", "C:\\x", "c:/x", "root/a\x00b",
		"root/dangling.txt", "root/real.txt/x", "root/two/r\u00e9sume\u0301.txt",
		"root/\U000e0fff.txt", // unassigned
	}
	for _, names := range [][]string{outside, unresolvable} {
		for _, name := range names {
			name = strings.Replace(name, "ROOT_ABS", s.root, 1)
			got, err := s.resolve(name)
			assert.Error(t, err, "%q bound as %+v", name, got)
		}
	}
	for _, name := range unresolvable {
		_, err := s.resolve(name)
		assert.ErrorIs(t, err, mcpgate.ErrPathUnresolvable, "%q", name)
	}
	for _, name := range outside {
		_, err := s.resolve(strings.Replace(name, "ROOT_ABS", s.root, 1))
		assert.True(t, err != nil, "%q", name)
	}

	noHome := s.r
	noHome.Home = ""
	_, err := noHome.Resolve(context.Background(), canon.Ref{Name: "~/home_target.txt", Kind: mcpgate.PathKind})
	assert.ErrorIs(t, err, mcpgate.ErrPathUnresolvable, "a home nobody knows")
	noBase := s.r
	noBase.Base = ""
	_, err = noBase.Resolve(context.Background(), canon.Ref{Name: "root/real.txt", Kind: mcpgate.PathKind})
	assert.ErrorIs(t, err, mcpgate.ErrPathUnresolvable, "a relative name without the server's base")
	small := s.r
	small.MaxEntries = 1
	_, err = small.Resolve(context.Background(), canon.Ref{Name: "root/re\u0301sume\u0301.txt", Kind: mcpgate.PathKind})
	assert.ErrorIs(t, err, mcpgate.ErrPathUnresolvable, "a directory too large to search")
}

// TestPathResolverIgnoresGivenTarget: Resolve resolves the name afresh,
// so a stored reference re-resolved before it runs shows a changed
// target as a changed effect, and a target forged into a reference is
// not believed.
func TestPathResolverIgnoresGivenTarget(t *testing.T) {
	s := newSpellingTree(t)
	name := "root/re\u0301sume\u0301.txt"
	first, err := s.resolve(name)
	require.NoError(t, err)
	forged := first
	forged.Target = filepath.Join(s.served, "secret.txt")
	again, err := s.r.Resolve(context.Background(), forged)
	require.NoError(t, err)
	assert.Equal(t, first, again)

	// The NFC file goes; its NFD twin appears: the name now means another
	// object, and the reference is a different one.
	require.NoError(t, os.Remove(filepath.Join(s.root, "r\u00e9sum\u00e9.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(s.root, "re\u0301sume\u0301.txt"), []byte("resume"), 0o600))
	moved, err := s.resolve(name)
	require.NoError(t, err)
	assert.NotEqual(t, first, moved)
	assert.Equal(t, first.SHA256, moved.SHA256, "same content, another object")
}
