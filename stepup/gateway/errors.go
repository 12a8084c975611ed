package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentstepup/asu/stepup"
)

// Sentinel errors of the HTTP layer itself. Refusals of the gate come back
// as the stepup sentinels they were on the server.
var (
	// ErrUnauthorized means the request carried no valid runtime token.
	ErrUnauthorized = errors.New("gateway: unauthorized")
	// ErrForbidden means the token may not do this: a call that names
	// another agent, or a cross-origin request to the approval site.
	ErrForbidden = errors.New("gateway: forbidden")
	// ErrInvalid means the request was malformed: bad JSON, an unknown
	// field, a bad timeout, a body where none belongs.
	ErrInvalid = errors.New("gateway: invalid request")
	// ErrTooLarge means the request body exceeded its bound.
	ErrTooLarge = errors.New("gateway: request too large")
	// ErrBusy means the runtime already has as many long polls open as
	// it may; it should wait on fewer tickets at once.
	ErrBusy = errors.New("gateway: too many concurrent waits")
	// ErrInternal means the service failed; it says no more, by design.
	ErrInternal = errors.New("gateway: internal error")
	// ErrUnavailable means the request ended (it was cancelled, or the
	// server is shutting down) before the gate answered; nothing is known
	// to have changed, and the runtime may ask again.
	ErrUnavailable = errors.New("gateway: unavailable")
	// ErrConfig means a handler, server or client option is unusable.
	ErrConfig = errors.New("gateway: invalid configuration")
)

// Error is a refusal as it crossed HTTP: the status, the stable machine
// readable code, and the server's message (which never quotes arguments
// or secrets). It unwraps to the sentinel its code names, so errors.Is
// works the same on both sides of the wire.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("gateway: %s (HTTP %d)", e.Code, e.Status)
	}
	return fmt.Sprintf("gateway: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// Unwrap returns the sentinel of e's code ([ErrInternal] for a code this
// version does not know).
func (e *Error) Unwrap() error {
	for _, c := range codes {
		if c.code == e.Code {
			return c.err
		}
	}
	return ErrInternal
}

// Stable error codes of the JSON API.
const (
	CodeNotFound      = "not_found"
	CodeNotApproved   = "not_approved"
	CodeConsumed      = "consumed"
	CodeExpired       = "expired"
	CodeResolved      = "resolved"
	CodeEffectChanged = "effect_changed"
	CodeBadAssertion  = "bad_assertion"
	CodeUnknownCred   = "unknown_credential"
	CodeCounter       = "counter"
	CodeNotPermitted  = "not_permitted"
	CodeNoExecutor    = "no_executor"
	CodeExecutor      = "executor_failed"
	CodeInvite        = "invalid_invite"
	CodeUnauthorized  = "unauthorized"
	CodeForbidden     = "forbidden"
	CodeInvalid       = "invalid"
	CodeTooLarge      = "too_large"
	CodeBusy          = "busy"
	CodeUnavailable   = "unavailable"
	CodeInternal      = "internal"
)

// codes maps sentinels to codes and statuses, most specific first.
// detail says whether the server's message may be shown; the messages of
// store and configuration failures may name paths and hosts, so those
// stay on the server.
var codes = []struct {
	err    error
	code   string
	status int
	detail bool
}{
	{stepup.ErrNotFound, CodeNotFound, http.StatusNotFound, true},
	{stepup.ErrConsumed, CodeConsumed, http.StatusConflict, true},
	{stepup.ErrExpired, CodeExpired, http.StatusGone, true},
	{stepup.ErrResolved, CodeResolved, http.StatusConflict, true},
	{stepup.ErrEffectChanged, CodeEffectChanged, http.StatusConflict, true},
	{stepup.ErrNotApproved, CodeNotApproved, http.StatusConflict, true},
	{stepup.ErrBadAssertion, CodeBadAssertion, http.StatusBadRequest, true},
	{stepup.ErrUnknownCredential, CodeUnknownCred, http.StatusForbidden, true},
	{stepup.ErrCounter, CodeCounter, http.StatusForbidden, true},
	{stepup.ErrNotPermitted, CodeNotPermitted, http.StatusForbidden, true},
	{stepup.ErrNoExecutor, CodeNoExecutor, http.StatusNotImplemented, true},
	{stepup.ErrExecutorFailed, CodeExecutor, http.StatusBadGateway, false},
	{stepup.ErrInvite, CodeInvite, http.StatusForbidden, true},
	{ErrUnauthorized, CodeUnauthorized, http.StatusUnauthorized, true},
	{ErrForbidden, CodeForbidden, http.StatusForbidden, true},
	{ErrInvalid, CodeInvalid, http.StatusBadRequest, true},
	{ErrTooLarge, CodeTooLarge, http.StatusRequestEntityTooLarge, true},
	{ErrBusy, CodeBusy, http.StatusTooManyRequests, true},
	{ErrUnavailable, CodeUnavailable, http.StatusServiceUnavailable, true},
	{ErrInternal, CodeInternal, http.StatusInternalServerError, false},
}

// classify returns the code, status and client-safe message of err.
func classify(err error) (code string, status int, msg string) {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			if c.detail {
				return c.code, c.status, err.Error()
			}
			return c.code, c.status, ""
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return CodeUnavailable, http.StatusServiceUnavailable, "the request ended before the gate answered"
	}
	return CodeInternal, http.StatusInternalServerError, ""
}
