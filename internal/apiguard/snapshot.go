package apiguard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ErrSnapshot is wrapped by every refusal of a snapshot file.
var ErrSnapshot = errors.New("apiguard: malformed API snapshot")

// Regenerate is the command that rewrites the snapshot.
const Regenerate = "go test ./internal/apiguard -update"

const (
	headerTitle  = "# The exported Go API of the asu modules. Do not edit: " + Regenerate
	headerDigest = "# digest: "
)

// Digest identifies a list of API lines: the first 16 hex digits of the
// SHA-256 of the lines, each ended by a newline. CHANGELOG.md quotes it.
func Digest(lines []string) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Render writes a snapshot file: a header holding the digest, then the
// lines.
func Render(lines []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%s%s\n", headerTitle, headerDigest, Digest(lines))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Parse reads a snapshot file written by [Render]. It refuses a file whose
// header digest is not the digest of its lines (a hand edit) or whose lines
// are not sorted and unique.
func Parse(b []byte) ([]string, error) {
	text, ok := strings.CutSuffix(string(b), "\n")
	if !ok {
		return nil, fmt.Errorf("%w: does not end in a newline", ErrSnapshot)
	}
	all := strings.Split(text, "\n")
	if len(all) < 2 || all[0] != headerTitle || !strings.HasPrefix(all[1], headerDigest) {
		return nil, fmt.Errorf("%w: no header (regenerate it: %s)", ErrSnapshot, Regenerate)
	}
	lines := all[2:]
	if !slices.IsSorted(lines) || len(slices.Compact(slices.Clone(lines))) != len(lines) {
		return nil, fmt.Errorf("%w: lines are not sorted and unique (regenerate it: %s)", ErrSnapshot, Regenerate)
	}
	if got, want := strings.TrimPrefix(all[1], headerDigest), Digest(lines); got != want {
		return nil, fmt.Errorf("%w: header digest %s is not the lines' digest %s: the file was edited by hand (regenerate it: %s)",
			ErrSnapshot, got, want, Regenerate)
	}
	return lines, nil
}

// ChangelogLine is the entry CHANGELOG.md's Unreleased section must carry
// for a snapshot with this digest.
func ChangelogLine(digest string) string {
	return "- API snapshot `" + digest + "` (" + snapshotPath + ")."
}

const snapshotPath = "internal/apiguard/testdata/api.txt"

// Diff lists the lines only in old (prefixed "- ") and only in new
// (prefixed "+ "), in order.
func Diff(old, new []string) []string {
	var out []string
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		switch {
		case j == len(new) || (i < len(old) && old[i] < new[j]):
			out = append(out, "- "+old[i])
			i++
		case i == len(old) || new[j] < old[i]:
			out = append(out, "+ "+new[j])
			j++
		default:
			i++
			j++
		}
	}
	return out
}

// Breaking lists the changes from released to current that break a user
// of the API: every line removed or changed (a changed signature, type or
// constant value removes its old line), and every method added to an
// interface that existed, which breaks its implementations.
func Breaking(released, current []string) []string {
	var out []string
	for _, d := range Diff(released, current) {
		added, ok := strings.CutPrefix(d, "+ ")
		if !ok {
			out = append(out, d) // removed, or the old form of a changed line
			continue
		}
		if iface, ok := interfaceOf(added); ok && slices.Contains(released, iface) {
			out = append(out, d+"  (a method added to an interface)")
		}
	}
	return out
}

// interfaceOf returns the line declaring the interface that line adds a
// method to, if it does.
func interfaceOf(line string) (string, bool) {
	i := strings.Index(line, " interface, ")
	if i < 0 || !strings.Contains(line[:i], ", type ") {
		return "", false
	}
	return line[:i] + " interface", true
}

// unreleasedHeading matches the Unreleased heading of Keep a Changelog,
// linked or not.
var unreleasedHeading = regexp.MustCompile(`(?m)^## \[?Unreleased\]?[ \t]*$`)

// breakingMark is how the Unreleased section marks an incompatible change:
// a "### Breaking" subsection or an entry starting with "**Breaking**".
var breakingMark = regexp.MustCompile(`(?m)^(### Breaking\b|[-*] \*\*Breaking\*\*)`)

// Unreleased returns the text of the Unreleased section of a changelog.
func Unreleased(changelog []byte) (string, bool) {
	loc := unreleasedHeading.FindIndex(changelog)
	if loc == nil {
		return "", false
	}
	rest := string(changelog[loc[1]:])
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest, true
}

// CheckChangelog reports what CHANGELOG.md's Unreleased section lacks
// for a snapshot of current when released was the API of the last
// release: nothing when the API is unchanged; otherwise the snapshot's
// [ChangelogLine], and a Breaking mark when [Breaking] finds anything.
func CheckChangelog(changelog []byte, released, current []string) []string {
	if slices.Equal(released, current) {
		return nil
	}
	section, ok := Unreleased(changelog)
	if !ok {
		return []string{"CHANGELOG.md has no \"## [Unreleased]\" section"}
	}
	var problems []string
	if line := ChangelogLine(Digest(current)); !strings.Contains(section, strings.TrimSuffix(strings.TrimPrefix(line, "- "), ".")) {
		problems = append(problems, "the Unreleased section of CHANGELOG.md does not quote the API snapshot; add:\n\t"+line)
	}
	br := Breaking(released, current)
	if len(br) > 0 && !breakingMark.MatchString(section) {
		problems = append(problems, fmt.Sprintf("the API changed incompatibly since the last release; the Unreleased section of CHANGELOG.md needs a \"### Breaking\" entry for:\n\t%s",
			strings.Join(br, "\n\t")))
	} else if unnamed := Unnamed(breakingText(section), br); len(unnamed) > 0 {
		problems = append(problems, fmt.Sprintf("the Breaking entries of CHANGELOG.md's Unreleased section do not name every incompatible change; name each declaration (`Name`, `pkg.Name` or a `Prefix*` pattern) for:\n\t%s",
			strings.Join(unnamed, "\n\t")))
	}
	return problems
}

// breakingText is the part of an Unreleased section that marks changes
// as breaking: its "### Breaking" subsection and each "**Breaking**"
// entry (to the next entry or subsection).
func breakingText(section string) string {
	var b strings.Builder
	sub, entry := false, false
	for _, line := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			sub, entry = strings.HasPrefix(line, "### Breaking"), false
		case strings.HasPrefix(line, "- "), strings.HasPrefix(line, "* "):
			entry = strings.HasPrefix(line[2:], "**Breaking**")
		}
		if sub || entry {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Declaration is the top-level name an API line declares or belongs to:
// F for a function, T for a type and for its fields and methods, with
// the last element of its package path ("gate", "F").
func Declaration(line string) (pkg, name string) {
	rest, ok := strings.CutPrefix(line, "pkg ")
	if !ok {
		return "", ""
	}
	path, rest, ok := strings.Cut(rest, ", ")
	if !ok {
		return "", ""
	}
	pkg = path[strings.LastIndexByte(path, '/')+1:]
	kind, rest, _ := strings.Cut(rest, " ")
	if kind == "method" {
		rest = strings.TrimLeft(strings.TrimPrefix(rest, "("), "*")
	}
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f)
	})
	if end < 0 {
		end = len(rest)
	}
	return pkg, rest[:end]
}

// namePattern finds what a Breaking entry names: a code span's
// identifier, optionally qualified by a package, optionally a prefix
// pattern ending in *.
var namePattern = regexp.MustCompile("`(?:([A-Za-z_][A-Za-z0-9_]*)\\.)?([A-Za-z_][A-Za-z0-9_]*)(\\*)?")

// Unnamed returns the changes of br (lines from [Breaking]) whose
// declaration text does not name: neither as `Name`, `pkg.Name`, nor
// under a `Prefix*` pattern. Naming a type covers its fields and methods.
func Unnamed(text string, br []string) []string {
	names, prefixes := map[string]bool{}, []string{}
	for _, m := range namePattern.FindAllStringSubmatch(text, -1) {
		if m[3] == "*" {
			prefixes = append(prefixes, m[2])
			continue
		}
		names[m[2]] = true
		if m[1] != "" {
			names[m[1]+"."+m[2]] = true
		}
	}
	var out []string
	for _, line := range br {
		pkg, name := Declaration(strings.TrimPrefix(line, "- "))
		if name == "" || names[name] || names[pkg+"."+name] || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		out = append(out, line)
	}
	return out
}
