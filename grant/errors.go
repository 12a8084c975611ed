package grant

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/agentstepup/asu/store"
)

// Sentinel errors; test with errors.Is. Errors never quote argument
// values. A refusal that means what a store's does is that sentinel
// itself: ErrExpired is [store.ErrExpired], which is
// [stepup.ErrExpired], and so on.
var (
	// ErrInvalidGrant: a grant or its stored spec is malformed, or a
	// record given to [Put] is.
	ErrInvalidGrant = errors.New("grant: invalid grant")
	// ErrNotCovered: the grant does not cover the effect. The error is a
	// [*CoverageError] naming why.
	ErrNotCovered = errors.New("grant: effect not covered")
	// ErrExpired is [store.ErrExpired]: the grant's expiry has passed.
	ErrExpired = store.ErrExpired
	// ErrUsedUp is [store.ErrGrantUsedUp]: the grant has no uses left (a
	// plan's step was used).
	ErrUsedUp = store.ErrGrantUsedUp
	// ErrRevoked is [store.ErrRevoked]: the grant was revoked; it covers
	// nothing.
	ErrRevoked = store.ErrRevoked
	// ErrNotFound is [store.ErrNotFound]: no grant has the id.
	ErrNotFound = store.ErrNotFound
	// ErrUnavailable: the store failed; the use is refused.
	ErrUnavailable = errors.New("grant: store unavailable")
)

// CoverageError is a refusal by [Use] because the grant does not cover the
// effect.
type CoverageError struct {
	Coverage Coverage
}

func (e *CoverageError) Error() string {
	if e.Coverage.Path == "" && !pathReason(e.Coverage.Reason) {
		return fmt.Sprintf("%v: %s", ErrNotCovered, e.Coverage.Reason)
	}
	return fmt.Sprintf("%v: %s at %s", ErrNotCovered, e.Coverage.Reason, quotePath(e.Coverage.Path))
}

// Unwrap returns ErrNotCovered.
func (e *CoverageError) Unwrap() error { return ErrNotCovered }

// quotePath quotes an argument path for error text, cut to a length a log
// line can hold: paths are argument names, which the agent chooses.
func quotePath(p string) string {
	const max = 80
	if len(p) > max {
		return strconv.Quote(p[:max]) + "..."
	}
	return strconv.Quote(p)
}
