package apiguard_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/apiguard"
)

var update = flag.Bool("update", false, "regenerate testdata/api.txt from the code; fails naming the CHANGELOG.md entries still missing")

const (
	snapshotFile = "testdata/api.txt"
	releasedFile = "testdata/api.released.txt" // the API of the last release: api.txt as it was then
	changelog    = "../../CHANGELOG.md"
)

// modules are the module roots the guard covers, relative to this package.
var modules = []string{"../..", "../../adapters"}

// currentAPI dumps both modules.
func currentAPI(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var all []string
	for _, m := range modules {
		lines, err := apiguard.Dump(ctx, m)
		require.NoError(t, err)
		require.NotEmpty(t, lines, "module %s has an exported API", m)
		all = append(all, lines...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

func readSnapshot(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines, err := apiguard.Parse(b)
	require.NoError(t, err, path)
	return lines
}

// TestAPISnapshot fails when the exported API differs from the snapshot,
// and when the snapshot differs from the last release's without
// CHANGELOG.md's Unreleased section saying so.
func TestAPISnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("apiguard: builds both modules' export data; not in -short")
	}
	current := currentAPI(t)
	released := readSnapshot(t, releasedFile)
	snapshot := current
	if *update {
		// The snapshot is rewritten; the changelog check below then names
		// the exact lines CHANGELOG.md still needs, as failures, so they
		// show without -v.
		require.NoError(t, os.WriteFile(snapshotFile, apiguard.Render(current), 0o644))
		t.Logf("wrote %s (%d lines); CHANGELOG.md's Unreleased section quotes it as:\n%s",
			snapshotFile, len(current), apiguard.ChangelogLine(apiguard.Digest(current)))
	} else {
		snapshot = readSnapshot(t, snapshotFile)
		if d := apiguard.Diff(snapshot, current); len(d) > 0 {
			t.Fatalf("the exported API is not the snapshot's (- snapshot, + code); if the change is meant, run `%s` and update CHANGELOG.md:\n%s",
				apiguard.Regenerate, strings.Join(d, "\n"))
		}
	}
	cl, err := os.ReadFile(changelog)
	require.NoError(t, err)
	for _, p := range apiguard.CheckChangelog(cl, released, snapshot) {
		t.Error(p)
	}
}

// TestReleasedSnapshotIsQuotedByItsRelease keeps the released snapshot
// tied to the changelog entry of its release.
func TestReleasedSnapshotIsQuotedByItsRelease(t *testing.T) {
	released := readSnapshot(t, releasedFile)
	cl, err := os.ReadFile(changelog)
	require.NoError(t, err)
	line := apiguard.ChangelogLine(apiguard.Digest(released))
	assert.Contains(t, string(cl), strings.TrimSuffix(line, "."), "CHANGELOG.md quotes the released snapshot's digest in its release's section")
}

func TestParseRefusesEditedSnapshots(t *testing.T) {
	good := apiguard.Render([]string{"pkg a, func F()", "pkg a, func G()"})
	_, err := apiguard.Parse(good)
	require.NoError(t, err)
	for name, b := range map[string][]byte{
		"line removed by hand":  []byte(strings.Replace(string(good), "pkg a, func G()\n", "", 1)),
		"line changed by hand":  []byte(strings.Replace(string(good), "func G()", "func G(int)", 1)),
		"lines out of order":    []byte(strings.Replace(strings.Replace(string(good), "F()", "X()", 1), "G()", "F()", 1)),
		"no header":             []byte("pkg a, func F()\n"),
		"no final newline":      good[:len(good)-1],
		"digest of other lines": append(apiguard.Render([]string{"pkg a, func F()"}), "pkg a, func G()\n"...),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := apiguard.Parse(b)
			assert.ErrorIs(t, err, apiguard.ErrSnapshot)
		})
	}
}

func TestBreakingFindsRemovalsChangesAndInterfaceGrowth(t *testing.T) {
	released := []string{
		"pkg a, const N untyped int = 1",
		"pkg a, func F(int) error",
		"pkg a, func G()",
		"pkg a, type I interface",
		"pkg a, type I interface, M()",
		"pkg a, type S struct",
		"pkg a, type S struct, X int",
	}
	for _, tc := range []struct {
		name     string
		edit     func([]string) []string
		breaking int
	}{
		{"unchanged", func(l []string) []string { return l }, 0},
		{"function added", func(l []string) []string { return append(l, "pkg a, func H()") }, 0},
		{"field added", func(l []string) []string { return append(l, "pkg a, type S struct, Y string") }, 0},
		{"new interface", func(l []string) []string {
			return append(l, "pkg a, type J interface", "pkg a, type J interface, M()")
		}, 0},
		{"function removed", func(l []string) []string { return without(l, "pkg a, func G()") }, 1},
		{"signature changed", func(l []string) []string {
			return append(without(l, "pkg a, func F(int) error"), "pkg a, func F(int64) error")
		}, 1},
		{"constant value changed", func(l []string) []string {
			return append(without(l, "pkg a, const N untyped int = 1"), "pkg a, const N untyped int = 2")
		}, 1},
		{"field removed", func(l []string) []string { return without(l, "pkg a, type S struct, X int") }, 1},
		{"method added to an interface", func(l []string) []string { return append(l, "pkg a, type I interface, N()") }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current := tc.edit(slices.Clone(released))
			slices.Sort(current)
			assert.Len(t, apiguard.Breaking(released, current), tc.breaking)
		})
	}
}

func without(lines []string, drop string) []string {
	return slices.DeleteFunc(lines, func(l string) bool { return l == drop })
}

func TestCheckChangelog(t *testing.T) {
	released := []string{"pkg a, func F()", "pkg a, func G()"}
	added := []string{"pkg a, func F()", "pkg a, func G()", "pkg a, func H()"}
	removed := []string{"pkg a, func F()"}
	entry := func(lines []string) string { return apiguard.ChangelogLine(apiguard.Digest(lines)) }
	for _, tc := range []struct {
		name      string
		changelog string
		current   []string
		problems  int
	}{
		{"unchanged API needs nothing", "# Changelog\n", released, 0},
		{"addition quoted", "## [Unreleased]\n### Added\n" + entry(added) + "\n## [0.1.0]\n", added, 0},
		{"addition not quoted", "## [Unreleased]\n### Added\n- H.\n## [0.1.0]\n" + entry(added) + "\n", added, 1},
		{"an older digest quoted", "## [Unreleased]\n" + entry(removed) + "\n", added, 1},
		{"no Unreleased section", "## [0.1.0]\n" + entry(added) + "\n", added, 1},
		{"removal quoted and marked", "## [Unreleased]\n### Breaking\n- `G` is gone.\n" + entry(removed) + "\n", removed, 0},
		{"removal marked as an entry", "## Unreleased\n- **Breaking** `a.G` is gone.\n" + entry(removed) + "\n", removed, 0},
		{"removal under a pattern", "## Unreleased\n### Breaking\n- the `G*` functions are gone.\n" + entry(removed) + "\n", removed, 0},
		{"removal marked, not named", "## [Unreleased]\n### Breaking\n- `F` changed.\n" + entry(removed) + "\n", removed, 1},
		{"removal named outside the Breaking entries", "## [Unreleased]\n### Removed\n- `G`.\n### Breaking\n- `F` changed.\n" + entry(removed) + "\n", removed, 1},
		{"removal named after a Breaking entry, in another", "## Unreleased\n- **Breaking** `F` changed.\n- `G` removed.\n" + entry(removed) + "\n", removed, 1},
		{"removal quoted, not marked", "## [Unreleased]\n### Removed\n- G.\n" + entry(removed) + "\n", removed, 1},
		{"removal marked in an older release only", "## [Unreleased]\n" + entry(removed) + "\n## [0.1.0]\n### Breaking\n", removed, 1},
		{"neither", "## [Unreleased]\n", removed, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := apiguard.CheckChangelog([]byte(tc.changelog), released, tc.current)
			assert.Len(t, got, tc.problems, "%q", got)
		})
	}
}

func TestDumpDescribesEveryKindOfDeclaration(t *testing.T) {
	if testing.Short() {
		t.Skip("apiguard: builds export data; not in -short")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("a/a.go", `package a

import "io"

const Tag = "asu/v1/x"
const (
	One Kind = iota + 1
	two
)
var ErrX = io.EOF
type Kind int
type Alias = Kind
type S struct {
	io.Reader
	Name string
	hidden int
}
type I interface {
	io.Closer
	Do(ctx int, s ...string) (n int, err error)
}
type G[T any] struct{ V T }
func F(r io.Reader) (*S, error) { return nil, nil }
func Map[K comparable, V any](m map[K]V) []K { return nil }
func (s *S) Get() string { return s.Name }
func (s S) unexported() {}
func helper() {}
`)
	write("a/a_test.go", "package a\n\nfunc TestOnly() {}\n")
	write("internal/x/x.go", "package x\n\nfunc Hidden() {}\n")
	write("examples/e/e.go", "package e\n\nfunc Example() {}\n")
	write("cmd/c/main.go", "package main\n\nfunc Exported() {}\nfunc main() {}\n")
	lines, err := apiguard.Dump(context.Background(), dir)
	require.NoError(t, err)
	p := "pkg example.com/m/a, "
	assert.Equal(t, []string{
		p + "const One Kind = 1",
		p + `const Tag untyped string = "asu/v1/x"`,
		p + "func F(io.Reader) (*S, error)",
		p + "func Map[K comparable, V any](map[K]V) []K",
		p + "method (*S) Get() string",
		p + "type Alias = Kind",
		p + "type G[T any] struct",
		p + "type G[T any] struct, V T",
		p + "type I interface",
		p + "type I interface, Do(int, ...string) (int, error)",
		p + "type I interface, embedded io.Closer",
		p + "type Kind int",
		p + "type S struct",
		p + "type S struct, Name string",
		p + "type S struct, embedded io.Reader",
		p + "var ErrX error",
	}, lines)
}

// TestDeclarationNamesWhatALineBelongsTo: a field or method belongs to
// its type, everything else to its own name, with the package's last
// path element.
func TestDeclarationNamesWhatALineBelongsTo(t *testing.T) {
	for line, want := range map[string][2]string{
		"pkg github.com/x/asu/stepup/gate, func WithExecutor(string, Executor) Option": {"gate", "WithExecutor"},
		"pkg github.com/x/asu/receipt, method (*ChainBreak) Error() string":            {"receipt", "ChainBreak"},
		"pkg github.com/x/asu/receipt, method (RubberStampRule) Trips(ClassMetrics)":   {"receipt", "RubberStampRule"},
		"pkg github.com/x/asu/receipt, type AuditRecord struct, Seq int64":             {"receipt", "AuditRecord"},
		"pkg github.com/x/asu/card, const RendererID untyped string = \"asu.card/v3\"": {"card", "RendererID"},
		"pkg a, var V []string":   {"a", "V"},
		"pkg a, type I interface": {"a", "I"},
		"# digest: 0123":          {"", ""},
	} {
		pkg, name := apiguard.Declaration(line)
		assert.Equal(t, want, [2]string{pkg, name}, line)
	}
}
