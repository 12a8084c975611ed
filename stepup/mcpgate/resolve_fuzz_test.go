//go:build unix

package mcpgate_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// FuzzPathResolver: whatever the name, Resolve does not panic, and what it
// binds lies under the root's real path: a target, when set, is absolute
// and inside it.
func FuzzPathResolver(f *testing.F) {
	for _, seed := range []string{"~/home_target.txt", "~/../../secret.txt", "root/re\u0301sume\u0301.txt",
		"root/up/secret.txt", "../x", "root/link.txt", "root/two/r\u00e9sume\u0301.txt", "C:\\x", " x", "~"} {
		f.Add(seed)
	}
	s := newSpellingTree(f)
	f.Fuzz(func(t *testing.T, name string) {
		got, err := s.r.Resolve(context.Background(), canon.Ref{Name: name, Kind: mcpgate.PathKind})
		if err != nil {
			return
		}
		target := got.Target
		if target == "" {
			target = name
		}
		rel, rerr := filepath.Rel(s.root, target)
		// IsLocal refuses a ".." component; a name such as "..0" is a
		// file like any other, inside the root.
		if !filepath.IsAbs(target) || rerr != nil || !filepath.IsLocal(rel) {
			t.Fatalf("%q bound %q, outside the root %s", name, target, s.root)
		}
	})
}
