package canon

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every refusal of [Canonicalize] wraps exactly one of the
// first nine; test for them with errors.Is.
var (
	ErrTooLarge      = errors.New("canon: input exceeds size limit")
	ErrTooDeep       = errors.New("canon: nesting exceeds depth limit")
	ErrSyntax        = errors.New("canon: invalid JSON")
	ErrTrailingData  = errors.New("canon: data after the JSON value")
	ErrInvalidUTF8   = errors.New("canon: invalid UTF-8")
	ErrLoneSurrogate = errors.New("canon: lone UTF-16 surrogate")
	ErrDuplicateKey  = errors.New("canon: duplicate object key")
	ErrNumber        = errors.New("canon: number cannot be represented exactly")
	ErrNotObject     = errors.New("canon: arguments must be a JSON object")

	// ErrNotCanonical: valid JSON that is not in canonical form, where
	// canonical form is required ([ParseValue], [ParseSealed]).
	ErrNotCanonical = errors.New("canon: not in canonical form")
	// ErrNotNumber: a decimal comparison of something that is not a JSON
	// number.
	ErrNotNumber = errors.New("canon: not a number")
	// ErrPrincipal: a principal id outside the syntax of [CheckPrincipalID],
	// or a [Principal] whose parts are of the wrong kind.
	ErrPrincipal = errors.New("canon: invalid principal id")
	// ErrNotRegular: a referenced file is not a regular file (a directory,
	// a named pipe, a device or a socket).
	ErrNotRegular = errors.New("canon: reference is not a regular file")

	ErrBadDigest     = errors.New("canon: malformed digest")
	ErrNotResolvable = errors.New("canon: reference kind not resolvable by this resolver")
	ErrRefEscapes    = errors.New("canon: reference leaves the resolver's root")
)

// Error is a refusal with the byte offset where it was found. It never
// quotes the input: arguments may hold secrets, and errors reach logs.
type Error struct {
	Offset int   // byte offset into the input
	Err    error // one of the sentinels above
}

func (e *Error) Error() string { return fmt.Sprintf("%v at byte %d", e.Err, e.Offset) }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }
