package mcpgate

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentstepup/asu/canon"
)

// PathKind is the reference kind of an upstream server's file path
// argument, as the filesystem server takes them: absolute, or relative
// to the server's directory.
const PathKind = "path"

// PathResolver binds "path" references to the content they name under
// Root, the directory the upstream server works in. An existing regular
// file resolves to its SHA-256 and size; a path where nothing exists yet
// (the target of a new write) resolves to a fixed "absent" digest with
// size -1, so a file that appears before the call runs changes the
// effect too. A path outside Root, through ".." or a symbolic link, is
// refused (the call is denied), as is anything that is not a regular file.
// It delegates every other kind to Next (nil: they are left unbound).
type PathResolver struct {
	Root string
	// MaxSize bounds the bytes hashed per file; 0 means 1 GiB.
	MaxSize int64
	Next    canon.Resolver
}

// AbsentDigest is the content hash a [PathResolver] gives a path where
// no file exists.
var AbsentDigest = canon.Digest(sha256.Sum256([]byte("asu/v1/absent")))

// ErrPathOutside means a path reference names something outside the
// resolver's root.
var ErrPathOutside = errors.New("mcpgate: path outside the gateway's root")

// Resolve implements canon.Resolver.
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
	rel, err := p.relative(r.Name)
	if err != nil {
		return canon.Ref{}, err
	}
	root, err := os.OpenRoot(p.Root)
	if err != nil {
		return canon.Ref{}, fmt.Errorf("open resolver root: %w", withoutPath(err))
	}
	defer root.Close()
	if _, err := root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		// Nothing there yet. Its parent must still be inside the root:
		// a write through a symbolic link to another directory is not.
		if _, perr := root.Stat(filepath.Dir(rel)); perr != nil && !errors.Is(perr, fs.ErrNotExist) {
			return canon.Ref{}, ErrPathOutside
		}
		return canon.Ref{Name: r.Name, Kind: r.Kind, SHA256: AbsentDigest, Size: -1}, nil
	}
	// An existing name is read as canon reads files: opened without
	// blocking, the opened descriptor checked to be a regular file (a pipe
	// swapped in after the look above is refused, never waited on), the
	// context honoured between chunks.
	got, err := canon.FileResolver{Root: p.Root, MaxSize: p.MaxSize}.Resolve(ctx, canon.Ref{Name: rel, Kind: "file"})
	switch {
	case errors.Is(err, canon.ErrRefEscapes):
		return canon.Ref{}, ErrPathOutside
	case errors.Is(err, fs.ErrNotExist):
		return canon.Ref{Name: r.Name, Kind: r.Kind, SHA256: AbsentDigest, Size: -1}, nil
	case err != nil:
		return canon.Ref{}, fmt.Errorf("path reference: %w", err)
	}
	return canon.Ref{Name: r.Name, Kind: r.Kind, SHA256: got.SHA256, Size: got.Size}, nil
}

// relative returns name relative to the root, refusing what leaves it.
func (p PathResolver) relative(name string) (string, error) {
	if name == "" || p.Root == "" {
		return "", ErrPathOutside
	}
	if filepath.IsAbs(name) {
		absRoot, err := filepath.Abs(p.Root)
		if err != nil {
			return "", ErrPathOutside
		}
		rel, err := filepath.Rel(absRoot, filepath.Clean(name))
		if err != nil {
			return "", ErrPathOutside
		}
		name = rel
	}
	if !filepath.IsLocal(name) {
		return "", ErrPathOutside
	}
	return name, nil
}

// withoutPath drops the file name from an *fs.PathError: names come from
// the call's arguments, which stay out of error text.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
