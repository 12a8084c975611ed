package mcpgate

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/canon"
)

// PathKind is the reference kind of an upstream server's file path
// argument, as the filesystem family of MCP servers takes them.
const PathKind = "path"

// DefaultMaxEntries bounds the entries of one directory a [PathResolver]
// reads to match a name by its Unicode normalization.
const DefaultMaxEntries = 100_000

// PathResolver binds "path" references to the object the upstream server
// will touch, resolved by the rules of the reference filesystem server
// (@modelcontextprotocol/server-filesystem), and refuses every name it
// cannot resolve the same way. Those rules, in order:
//
//   - a leading "~" (alone, or followed by "/") is the server process's
//     home directory: Home. Without a Home such names are refused.
//   - a relative name is resolved against the server's first allowed
//     directory: Base. Without a Base, or when the name climbs out of it
//     (where the server would try its other directories), it is refused.
//   - an existing path is taken at its real path, every symbolic link
//     followed.
//   - a path that does not exist byte for byte is looked up one component
//     at a time: an entry of that exact name, or else the one entry with
//     the same NFC normalization (two such entries: refused), each found
//     entry at its real path; from the first component with no entry on,
//     the rest names something new.
//
// The object found must lie under the real path of Root, the directory the
// gateway lets calls touch: a name that leads elsewhere, through "..",
// "~", a symbolic link or a normalization, is refused ([ErrPathOutside]).
// Names the server reads differently in different steps (leading or
// trailing white space or quotes, a Windows drive, NUL, code points
// Unicode has not assigned, whose normalization may differ between
// versions) are refused as unresolvable ([ErrPathUnresolvable]).
//
// An existing regular file binds its SHA-256 and size; a target where
// nothing exists yet (a new file to write) binds the fixed [AbsentDigest]
// with size -1, so a file appearing before the call runs changes the
// effect too. Anything else there (a directory, a pipe) is refused. When
// the target is spelled otherwise than the name, the reference carries it
// in Target, which the digest covers and the card shows ("~/q3.csv, which
// is /srv/files/q3.csv").
//
// Case-insensitive filesystems need nothing of their own: the resolver
// asks the filesystem as the server does, so a name in other letter case
// finds the object the server will find.
//
// The resolver runs in the gateway's process: it holds only while the
// server sees the same filesystem at the same paths (a server in a
// container with mounts of its own needs a resolver that knows them), and
// between the gate's last resolution, right before the call runs, and the
// server's own, whoever can write under the root can still move files.
//
// It delegates every other kind to Next (nil: they are left unbound).
type PathResolver struct {
	// Root confines every target: the server may serve more, but a call
	// through the gateway touches only what lies under Root.
	Root string
	// Base is the directory the server resolves relative names against;
	// for server-filesystem, the first directory it was started with.
	// Empty: relative names are refused.
	Base string
	// Home is the home directory of the server's process, which a
	// leading "~" names. Empty: such names are refused.
	Home string
	// MaxSize bounds the bytes hashed per file; 0 means 1 GiB.
	MaxSize int64
	// MaxEntries bounds the entries read from one directory to match a
	// name by normalization; 0 means [DefaultMaxEntries]. A larger
	// directory makes such a name unresolvable.
	MaxEntries int
	Next       canon.Resolver
}

// AbsentDigest is the content hash a [PathResolver] gives a path where
// no file exists.
var AbsentDigest = canon.Digest(sha256.Sum256([]byte("asu/v1/absent")))

// ErrPathOutside means a path reference names something outside the
// resolver's root.
var ErrPathOutside = errors.New("mcpgate: path outside the gateway's root")

// ErrPathUnresolvable means a path reference cannot be pinned to one
// object the way the upstream server will resolve it: a "~" without a
// known home, a relative name without a known base, two directory entries
// with one normalization, a name the server reads two ways.
var ErrPathUnresolvable = errors.New("mcpgate: path cannot be resolved as the upstream server resolves it")

// Resolve implements canon.Resolver. It resolves r.Name afresh, whatever
// r.Target says.
func (p PathResolver) Resolve(ctx context.Context, r canon.Ref) (canon.Ref, error) {
	if r.Kind != PathKind {
		if p.Next == nil {
			return canon.Ref{}, fmt.Errorf("%w: kind %q", canon.ErrNotResolvable, r.Kind)
		}
		return p.Next.Resolve(ctx, r)
	}
	if err := ctx.Err(); err != nil {
		return canon.Ref{}, err
	}
	realRoot, err := p.realRoot()
	if err != nil {
		return canon.Ref{}, err
	}
	target, err := p.Locate(ctx, r.Name)
	if err != nil {
		return canon.Ref{}, err
	}
	rel, ok := under(realRoot, target)
	if !ok {
		return canon.Ref{}, ErrPathOutside
	}
	out := canon.Ref{Name: r.Name, Kind: r.Kind}
	if target != r.Name {
		out.Target = target
	}
	root, err := os.OpenRoot(realRoot)
	if err != nil {
		return canon.Ref{}, fmt.Errorf("open resolver root: %w", withoutPath(err))
	}
	defer root.Close()
	if _, err := root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		out.SHA256, out.Size = AbsentDigest, -1
		return out, nil
	} else if err != nil {
		return canon.Ref{}, ErrPathOutside // a component swapped for a link out of the root
	}
	// An existing name is read as canon reads files: opened without
	// blocking, the opened descriptor checked to be a regular file (a pipe
	// swapped in after the look above is refused, never waited on), the
	// context honoured between chunks, confined to the root by os.Root.
	got, err := canon.FileResolver{Root: realRoot, MaxSize: p.MaxSize}.Resolve(ctx, canon.Ref{Name: rel, Kind: "file"})
	switch {
	case errors.Is(err, canon.ErrRefEscapes):
		return canon.Ref{}, ErrPathOutside
	case errors.Is(err, fs.ErrNotExist):
		out.SHA256, out.Size = AbsentDigest, -1
		return out, nil
	case err != nil:
		return canon.Ref{}, fmt.Errorf("path reference: %w", err)
	}
	out.SHA256, out.Size = got.SHA256, got.Size
	return out, nil
}

// Locate returns the absolute path of the object the upstream server
// will touch for name, by the rules [PathResolver] states, without
// confining it to Root. Its errors wrap [ErrPathUnresolvable].
func (p PathResolver) Locate(ctx context.Context, name string) (string, error) {
	if err := spelledOneWay(name); err != nil {
		return "", err
	}
	expanded := name
	if name == "~" || strings.HasPrefix(name, "~/") {
		if p.Home == "" || !filepath.IsAbs(p.Home) {
			return "", fmt.Errorf("%w: the server's home directory is not known", ErrPathUnresolvable)
		}
		expanded = filepath.Join(p.Home, name[1:])
	}
	if driveLike(expanded) {
		return "", fmt.Errorf("%w: a Windows drive path", ErrPathUnresolvable)
	}
	var abs string
	if filepath.IsAbs(expanded) {
		abs = filepath.Clean(expanded)
	} else {
		if p.Base == "" || !filepath.IsAbs(p.Base) {
			return "", fmt.Errorf("%w: a relative path, and the server's base directory is not known", ErrPathUnresolvable)
		}
		base := filepath.Clean(p.Base)
		abs = filepath.Join(base, expanded)
		if _, ok := under(base, abs); !ok {
			// The server would try its other directories: not ours to guess.
			return "", fmt.Errorf("%w: a relative path that climbs out of the server's base", ErrPathUnresolvable)
		}
	}
	return p.walk(ctx, abs)
}

// walk finds the object the server touches for the clean absolute path
// abs: its real path when it exists, otherwise the lookup by component
// that falls back on NFC-equivalent entries.
func (p PathResolver) walk(ctx context.Context, abs string) (string, error) {
	if _, err := os.Stat(abs); err == nil {
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrPathUnresolvable, withoutPath(err))
		}
		return real, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		// Not a directory on the way, a loop, no permission: the server
		// fails such a path too, so nothing binds to it.
		return "", fmt.Errorf("%w: %v", ErrPathUnresolvable, withoutPath(err))
	}
	parts := strings.Split(strings.TrimPrefix(abs, string(filepath.Separator)), string(filepath.Separator))
	cur := string(filepath.Separator)
	for i, part := range parts {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		next := filepath.Join(cur, part)
		st, err := os.Lstat(next)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			match, err := p.equivalent(cur, part)
			if err != nil {
				return "", err
			}
			if match == "" {
				// Nothing below exists: the rest is new, and has no links.
				return filepath.Join(append([]string{cur}, parts[i:]...)...), nil
			}
			next = filepath.Join(cur, match)
			if st, err = os.Lstat(next); err != nil {
				return "", fmt.Errorf("%w: %v", ErrPathUnresolvable, withoutPath(err))
			}
		default:
			return "", fmt.Errorf("%w: %v", ErrPathUnresolvable, withoutPath(err))
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next // cur is real and next is no link: next is real
			continue
		}
		real, err := filepath.EvalSymlinks(next)
		if err != nil {
			// A link to nothing: the server refuses it ("parent directory
			// does not exist"), and it would be bound as absent here.
			return "", fmt.Errorf("%w: a symbolic link to nothing", ErrPathUnresolvable)
		}
		cur = real
	}
	return cur, nil
}

// equivalent returns the one entry of dir whose NFC normalization is
// part's, "" when there is none; two are ambiguous. An entry holding a
// code point Unicode has not assigned could be equivalent under another
// Unicode version's tables, so it makes the lookup unresolvable.
func (p PathResolver) equivalent(dir, part string) (string, error) {
	max := p.MaxEntries
	if max <= 0 {
		max = DefaultMaxEntries
	}
	f, err := os.Open(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrPathUnresolvable, withoutPath(err))
	}
	defer f.Close()
	names, err := f.Readdirnames(max + 1)
	if err != nil && len(names) == 0 && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%w: %v", ErrPathUnresolvable, withoutPath(err))
	}
	if len(names) > max {
		return "", fmt.Errorf("%w: a directory of more than %d entries", ErrPathUnresolvable, max)
	}
	want := norm.NFC.String(part)
	match := ""
	for _, n := range names {
		if n == part {
			return n, nil
		}
		if !assigned(n) {
			return "", fmt.Errorf("%w: a directory entry with unassigned code points", ErrPathUnresolvable)
		}
		if norm.NFC.String(n) != want {
			continue
		}
		if match != "" {
			return "", fmt.Errorf("%w: two entries with one normalization", ErrPathUnresolvable)
		}
		match = n
	}
	return match, nil
}

// realRoot returns Root's absolute real path.
func (p PathResolver) realRoot() (string, error) {
	if p.Root == "" {
		return "", ErrPathOutside
	}
	abs, err := filepath.Abs(p.Root)
	if err != nil {
		return "", fmt.Errorf("resolver root: %w", withoutPath(err))
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolver root: %w", withoutPath(err))
	}
	return real, nil
}

// under returns path relative to dir when it lies in dir (or is dir:
// "."), both clean and absolute.
func under(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return rel, true
}

// spelledOneWay refuses names the server reads one way to check and
// another to open: its check trims white space (as JavaScript's trim
// does) and one leading and one trailing quote, while it opens the name
// as given. It also refuses NUL, text that is not UTF-8 and unassigned
// code points, whose normalization may differ between Unicode versions.
func spelledOneWay(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: an empty path", ErrPathUnresolvable)
	case !utf8.ValidString(name), strings.ContainsRune(name, 0):
		return fmt.Errorf("%w: not a valid path", ErrPathUnresolvable)
	}
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	for _, r := range []rune{first, last} {
		if jsSpace(r) || r == '"' || r == '\'' {
			return fmt.Errorf("%w: a path that starts or ends with white space or a quote", ErrPathUnresolvable)
		}
	}
	if !assigned(name) {
		return fmt.Errorf("%w: a path with unassigned code points", ErrPathUnresolvable)
	}
	return nil
}

// jsSpace reports whether JavaScript's String.prototype.trim removes r,
// or Go's unicode.IsSpace holds (a superset: U+0085 too).
func jsSpace(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }

// assigned reports whether every code point of s is assigned a category
// (unicode.C holds the unassigned ones too, so it is not used).
func assigned(s string) bool {
	for _, r := range s {
		if r < utf8.RuneSelf {
			continue
		}
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co) {
			return false
		}
	}
	return true
}

// driveLike reports whether name starts like a Windows drive path ("C:",
// "C:\", "C:/"), which the server refuses on a POSIX host.
func driveLike(name string) bool {
	if len(name) < 2 || name[1] != ':' {
		return false
	}
	c := name[0]
	if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
		return false
	}
	return len(name) == 2 || name[2] == '\\' || name[2] == '/'
}

// withoutPath drops the file name from an *fs.PathError: names come from
// the call's arguments, which stay out of error text.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
