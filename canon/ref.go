package canon

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
)

// Ref is something the arguments point at whose content is part of the
// effect: an attachment, a file to upload. A resolved Ref carries the
// content's SHA-256 and size, so editing the content after approval changes
// the effect's digest. A Ref that could not be resolved (a linked web page,
// say) says why in Unbound, and the approval card shows that the approval
// does not cover its content.
type Ref struct {
	// Name is the reference as the arguments spell it, e.g. "q3.csv".
	Name string `json:"name"`
	// Kind says what Name refers to, e.g. "file" or "url".
	Kind string `json:"kind"`
	// SHA256 is the content hash; zero when Unbound is set.
	SHA256 Digest `json:"sha256"`
	// Size is the content length in bytes; zero when Unbound is set.
	Size int64 `json:"size"`
	// Target is the object Name resolves to, as the tool that runs the
	// call will resolve it, when that differs from Name: for a file path
	// that a server expands or normalizes ("~/q3.csv"), the absolute path
	// of the file it will touch. Empty when Name is the target itself.
	// The digest covers it, and the card shows it next to Name. It is
	// left out of the canonical form when empty, so effects without one
	// hash as they always did.
	Target string `json:"target,omitempty"`
	// Unbound is empty for a resolved reference, otherwise the reason its
	// content is not covered by the digest.
	Unbound string `json:"unbound"`
}

// Bound reports whether r's content is covered by the digest.
func (r Ref) Bound() bool { return r.Unbound == "" }

// Resolver turns a named reference into one with a content hash. It returns
// an error wrapping [ErrNotResolvable] for kinds it does not handle; any other
// error means the reference should have resolved and did not, and callers
// fail closed.
//
// # The contract of a resolver
//
// A resolver says what the name means to the tool that will run the call,
// not what it means to the gate: the content it binds must be the content
// the tool touches. So it resolves the name with the tool's own rules (a
// home directory, Unicode normalization, relative names, case folding,
// symbolic links), and when the object it finds is spelled otherwise than
// the name, it says which in [Ref.Target], for the card to show. A name it
// cannot pin to exactly one object by those rules (an ambiguous
// normalization, a home directory it does not know, a relative name without
// the tool's base) is an error, never a reference bound as absent: "absent"
// claims that the one object the name denotes does not exist. Resolve
// ignores the Target of the reference it is given and resolves Name afresh,
// so the gate re-resolving a stored reference before it runs finds any
// change of target as a change of the effect.
type Resolver interface {
	Resolve(ctx context.Context, r Ref) (Ref, error)
}

// ResolveAll resolves every reference. A reference whose kind the resolver
// does not handle is kept, marked unbound with a reason; any other error is
// returned. A nil resolver marks every reference unbound. It stops with
// ctx's error as soon as ctx is done, between references and, for
// resolvers that honour it, inside one.
func ResolveAll(ctx context.Context, res Resolver, refs []Ref) ([]Ref, error) {
	out := make([]Ref, len(refs))
	for i, r := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if res == nil {
			out[i] = unbound(r, "no resolver configured")
			continue
		}
		got, err := res.Resolve(ctx, r)
		switch {
		case errors.Is(err, ErrNotResolvable):
			out[i] = unbound(r, "content of a "+r.Kind+" reference is not fetched")
		case err != nil:
			return nil, fmt.Errorf("resolve %s reference %d: %w", r.Kind, i, err)
		default:
			out[i] = got
		}
	}
	return out, nil
}

func unbound(r Ref, why string) Ref {
	return Ref{Name: r.Name, Kind: r.Kind, Unbound: why}
}

// FileResolver resolves references of kind "file" to files under Root. It
// refuses absolute names, names with "..", and symlinks that lead outside
// Root: the confinement is done by [os.Root], so it holds against symlinks
// swapped in between checks.
//
// Only regular files resolve. The file is opened without blocking (on Unix,
// O_NONBLOCK) and the opened descriptor is checked, so a named pipe,
// device, socket or directory is refused with [ErrNotRegular] even when it
// replaced a regular file after any earlier look: nothing waits for a
// writer. Reading checks ctx between chunks.
type FileResolver struct {
	Root string
	// MaxSize bounds the bytes hashed per file; 0 means 1 GiB.
	MaxSize int64
}

// readChunk is how much is hashed between two looks at the context.
const readChunk = 256 << 10

// Resolve hashes the named file under Root.
func (f FileResolver) Resolve(ctx context.Context, r Ref) (Ref, error) {
	if r.Kind != "file" {
		return Ref{}, fmt.Errorf("%w: kind %q", ErrNotResolvable, r.Kind)
	}
	if err := ctx.Err(); err != nil {
		return Ref{}, err
	}
	name := r.Name
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") ||
		!filepath.IsLocal(name) {
		return Ref{}, ErrRefEscapes
	}
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		return Ref{}, fmt.Errorf("open resolver root: %w", err)
	}
	defer root.Close()
	file, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		if strings.Contains(err.Error(), "escapes") {
			return Ref{}, ErrRefEscapes
		}
		if isNotRegularOpen(err) {
			return Ref{}, ErrNotRegular
		}
		return Ref{}, fmt.Errorf("open reference: %w", withoutPath(err))
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return Ref{}, fmt.Errorf("stat reference: %w", withoutPath(err))
	}
	if !st.Mode().IsRegular() {
		return Ref{}, ErrNotRegular
	}
	limit := f.MaxSize
	if limit <= 0 {
		limit = 1 << 30
	}
	h := sha256.New()
	var n int64
	lr := io.LimitReader(file, limit+1)
	buf := make([]byte, min(readChunk, limit+1))
	for {
		if err := ctx.Err(); err != nil {
			return Ref{}, err
		}
		k, err := io.ReadFull(lr, buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return Ref{}, fmt.Errorf("read reference: %w", withoutPath(err))
		}
	}
	if n > limit {
		return Ref{}, fmt.Errorf("reference larger than %d bytes", limit)
	}
	out := Ref{Name: r.Name, Kind: r.Kind, Size: n}
	copy(out.SHA256[:], h.Sum(nil))
	return out, nil
}

// withoutPath drops the file name from an *fs.PathError: the name comes from
// the call's arguments, which stay out of error text.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
