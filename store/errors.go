package store

import (
	"errors"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Sentinel errors. Every refusal wraps exactly one; test with errors.Is.
// A cancelled context yields an error wrapping ctx.Err() instead.
//
// A refusal that means what one of the runtime's refusals means is that
// sentinel itself, so there is one per meaning: a store's ErrNotFound is
// [stepup.ErrNotFound], its ErrTooLarge is [canon.ErrTooLarge], and so on,
// and errors.Is holds whichever name a caller tests.
var (
	// ErrNotFound is [stepup.ErrNotFound]: no record has the id.
	ErrNotFound = stepup.ErrNotFound
	// ErrResolved is [stepup.ErrResolved]: the ticket was already decided.
	ErrResolved = stepup.ErrResolved
	// ErrExpired is [stepup.ErrExpired]: the ticket's or grant's expiry
	// has passed.
	ErrExpired = stepup.ErrExpired
	// ErrNotApproved is [stepup.ErrNotApproved]: the ticket is not
	// approved.
	ErrNotApproved = stepup.ErrNotApproved
	// ErrConsumed is [stepup.ErrConsumed]: the approval was already used.
	ErrConsumed = stepup.ErrConsumed
	// ErrRevoked is [stepup.ErrRevoked]: the ticket's approval, the
	// credential, grant or invite was revoked.
	ErrRevoked = stepup.ErrRevoked
	// ErrTooLarge is [canon.ErrTooLarge]: a field exceeds its size limit.
	ErrTooLarge = canon.ErrTooLarge

	// ErrDuplicate means a record with the id already exists.
	ErrDuplicate = errors.New("store: already exists")
	// ErrInvalid means a record fails its checks (see [Approval.Check]).
	ErrInvalid = errors.New("store: invalid record")
	// ErrFenced means the caller no longer owns the executing ticket.
	ErrFenced = errors.New("store: not the current owner of an executing ticket")
	// ErrLeaseLive means an executing ticket's lease has not expired.
	ErrLeaseLive = errors.New("store: execution lease has not expired")
	// ErrClockSkew means a time given is off the store's own clock.
	ErrClockSkew = errors.New("store: time is off the store's clock")
	// ErrPendingCap means a cap on live pending tickets is reached.
	ErrPendingCap = errors.New("store: pending cap reached")
	// ErrCounter means an authenticator's signature counter did not
	// advance: a cloned or replayed authenticator.
	ErrCounter = errors.New("store: sign count did not increase")
	// ErrGrantUsedUp means the grant has no uses left.
	ErrGrantUsedUp = errors.New("store: grant has no uses left")
	// ErrClosed means the store is closed.
	ErrClosed = errors.New("store: closed")
	// ErrCorrupt means a record the store read does not match its own
	// hash or its link to the previous record, or cannot be parsed at all:
	// the store's contents were changed behind its back (bit rot, a
	// damaged file, a writer that bypassed the store). A store that
	// detected it refuses to decide until it is reopened ([Damage]).
	ErrCorrupt = errors.New("store: stored records are damaged")
)
