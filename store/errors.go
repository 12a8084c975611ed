package store

import "errors"

// Sentinel errors. Every refusal wraps exactly one; test with errors.Is.
// A cancelled context yields an error wrapping ctx.Err() instead.
var (
	ErrNotFound    = errors.New("store: not found")
	ErrDuplicate   = errors.New("store: already exists")
	ErrInvalid     = errors.New("store: invalid record")
	ErrTooLarge    = errors.New("store: field exceeds size limit")
	ErrResolved    = errors.New("store: ticket already resolved")
	ErrExpired     = errors.New("store: expired")
	ErrNotApproved = errors.New("store: ticket not approved")
	ErrConsumed    = errors.New("store: already used")
	ErrFenced      = errors.New("store: not the current owner of an executing ticket")
	ErrLeaseLive   = errors.New("store: execution lease has not expired")
	ErrRevoked     = errors.New("store: revoked")
	ErrClockSkew   = errors.New("store: time is off the store's clock")
	ErrPendingCap  = errors.New("store: pending cap reached")
	ErrCounter     = errors.New("store: sign count did not increase")
	ErrGrantUsedUp = errors.New("store: grant has no uses left")
	ErrClosed      = errors.New("store: closed")
)
