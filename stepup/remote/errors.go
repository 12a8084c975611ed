package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Sentinel errors of the HTTP layer itself, on both sides of the wire. Refusals of the gate come back
// as the stepup sentinels they were on the server.
var (
	// ErrUnauthorized means the request carried no valid runtime token.
	ErrUnauthorized = errors.New("remote: unauthorized")
	// ErrForbidden means the token may not do this: a call that names
	// another agent, or a cross-origin request to the approval site.
	ErrForbidden = errors.New("remote: forbidden")
	// ErrInvalid means the request was malformed: bad JSON, an unknown
	// field, a bad timeout, a body where none belongs.
	ErrInvalid = errors.New("remote: invalid request")
	// ErrTooLarge is [canon.ErrTooLarge], the one sentinel for input over
	// its bound: the request body exceeded its bound.
	ErrTooLarge = canon.ErrTooLarge
	// ErrBusy means the runtime already has as many long polls open as
	// it may; it should wait on fewer tickets at once.
	ErrBusy = errors.New("remote: too many concurrent waits")
	// ErrInternal means the service failed; it says no more, by design.
	ErrInternal = errors.New("remote: internal error")
	// ErrUnavailable means the request ended (it was cancelled, or the
	// server is shutting down) before the gate answered; nothing is known
	// to have changed, and the runtime may ask again.
	ErrUnavailable = errors.New("remote: unavailable")
)

// Error is a refusal as it crossed HTTP: the status, the stable machine
// readable code, the codes of the other sentinels the server's error
// wrapped, and the server's message (which never quotes arguments or
// secrets). It unwraps to the sentinels its codes name, so errors.Is
// works the same on both sides of the wire, for an error that wraps
// several sentinels (an unknown outcome that is also a store failure)
// too.
type Error struct {
	Status  int
	Code    string
	Also    []string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("remote: %s (HTTP %d)", e.Code, e.Status)
	}
	return fmt.Sprintf("remote: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// Unwrap returns the sentinels of e's code ([ErrInternal] for a code this
// version does not know) and of the codes in Also that it knows.
func (e *Error) Unwrap() []error {
	errs := []error{sentinel(e.Code)}
	for _, code := range e.Also {
		if s := sentinel(code); s != ErrInternal || code == CodeInternal {
			errs = append(errs, s)
		}
	}
	return errs
}

// sentinel is the sentinel of code, [ErrInternal] for a code this version
// does not know.
func sentinel(code string) error {
	for _, c := range slices.Concat(codes, runtimeCodes) {
		if c.Code == code {
			return c.Err
		}
	}
	return ErrInternal
}

// Stable error codes of the JSON API.
const (
	CodeNotFound       = "not_found"
	CodeNotApproved    = "not_approved"
	CodeRevoked        = "revoked"
	CodePolicyChanged  = "policy_changed"
	CodeOutcomeUnknown = "outcome_unknown"
	CodeRolledBack     = "rolled_back"
	CodeConsumed       = "consumed"
	CodeExpired        = "expired"
	CodeResolved       = "resolved"
	CodeEffectChanged  = "effect_changed"
	CodeBadAssertion   = "bad_assertion"
	CodeNotPermitted   = "not_permitted"
	CodeTooFast        = "too_fast"
	CodeNoExecutor     = "no_executor"
	CodeExecutor       = "executor_failed"
	CodeStore          = "store"
	CodeConfig         = "config"
	CodeUnauthorized   = "unauthorized"
	CodeForbidden      = "forbidden"
	CodeInvalid        = "invalid"
	CodeTooLarge       = "too_large"
	CodeBusy           = "busy"
	CodeUnavailable    = "unavailable"
	CodeInternal       = "internal"
)

// Code is one row of the error table: a sentinel, its stable code and
// HTTP status, and whether the server's message may be shown (the
// messages of store and configuration failures may name paths and hosts,
// so those stay on the server). A message is shown only when every row
// the error matches allows it, and never for an error that wraps
// [stepup.ErrStore] or [stepup.ErrConfig], whatever its code.
type Code struct {
	Err    error
	Code   string
	Status int
	Detail bool
}

// codes maps the runtime's and the HTTP layer's sentinels to codes and
// statuses, most specific first.
var codes = []Code{
	{stepup.ErrNotFound, CodeNotFound, http.StatusNotFound, true},
	{stepup.ErrConsumed, CodeConsumed, http.StatusConflict, true},
	{stepup.ErrExpired, CodeExpired, http.StatusGone, true},
	{stepup.ErrResolved, CodeResolved, http.StatusConflict, true},
	{stepup.ErrEffectChanged, CodeEffectChanged, http.StatusConflict, true},
	{stepup.ErrNotApproved, CodeNotApproved, http.StatusConflict, true},
	{stepup.ErrRevoked, CodeRevoked, http.StatusGone, true},
	{stepup.ErrPolicyChanged, CodePolicyChanged, http.StatusConflict, true},
	{stepup.ErrRolledBack, CodeRolledBack, http.StatusServiceUnavailable, false},
	{stepup.ErrOutcomeUnknown, CodeOutcomeUnknown, http.StatusServiceUnavailable, false},
	{stepup.ErrBadAssertion, CodeBadAssertion, http.StatusBadRequest, true},
	{stepup.ErrNotPermitted, CodeNotPermitted, http.StatusForbidden, true},
	{stepup.ErrTooFast, CodeTooFast, http.StatusTooEarly, true},
	{stepup.ErrNoExecutor, CodeNoExecutor, http.StatusNotImplemented, true},
	{stepup.ErrExecutorFailed, CodeExecutor, http.StatusBadGateway, false},
	{ErrUnauthorized, CodeUnauthorized, http.StatusUnauthorized, true},
	{ErrForbidden, CodeForbidden, http.StatusForbidden, true},
	{ErrInvalid, CodeInvalid, http.StatusBadRequest, true},
	{ErrTooLarge, CodeTooLarge, http.StatusRequestEntityTooLarge, true},
	{ErrBusy, CodeBusy, http.StatusTooManyRequests, true},
	{ErrUnavailable, CodeUnavailable, http.StatusServiceUnavailable, true},
	{ErrInternal, CodeInternal, http.StatusInternalServerError, false},
}

// runtimeCodes are the agent API's own rows: a runtime tells a store
// failure (not run, safe to propose again, unless the outcome is unknown
// too) and a configuration failure apart from other internal errors, by
// sentinel, as it does in process. Their messages stay on the server.
var runtimeCodes = []Code{
	{stepup.ErrStore, CodeStore, http.StatusServiceUnavailable, false},
	{stepup.ErrConfig, CodeConfig, http.StatusInternalServerError, false},
}

// RuntimeCodes returns the agent API's rows of the error table beside
// the shared ones: store 503 and config 500, never with a message. Pass
// them to [Classify] or [ClassifyAll] to answer a runtime.
func RuntimeCodes() []Code { return slices.Clone(runtimeCodes) }

// Classify returns the stable code, HTTP status and client-safe message of
// a refusal err, as the gateway answers it. extra rows (the approval
// site's own sentinels) are tried first. An error of no known sentinel is
// internal, and its message stays on the server.
func Classify(err error, extra ...Code) (code string, status int, msg string) {
	r := ClassifyAll(err, extra...)
	return r.Code, r.Status, r.Message
}

// Refusal is how the gateway answers an error: its stable code and HTTP
// status, the codes of the other sentinels it wraps, and the message the
// client may read ("" when the message stays on the server).
type Refusal struct {
	Code    string
	Status  int
	Also    []string
	Message string
}

// ClassifyAll is [Classify] with the codes of every other known sentinel
// err wraps, which the client turns back into sentinels.
func ClassifyAll(err error, extra ...Code) Refusal {
	var r Refusal
	detail := true
	for _, c := range append(extra, codes...) {
		if !errors.Is(err, c.Err) {
			continue
		}
		detail = detail && c.Detail
		switch {
		case r.Code == "":
			r.Code, r.Status = c.Code, c.Status
		case c.Code != r.Code && !slices.Contains(r.Also, c.Code):
			r.Also = append(r.Also, c.Code)
		}
	}
	if r.Code == "" {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return Refusal{Code: CodeUnavailable, Status: http.StatusServiceUnavailable,
				Message: "the request ended before the gate answered"}
		}
		return Refusal{Code: CodeInternal, Status: http.StatusInternalServerError}
	}
	// A store's or a configuration's text may name hosts, users and
	// files: whatever the code, it stays on the server.
	if detail && !errors.Is(err, stepup.ErrStore) && !errors.Is(err, stepup.ErrConfig) {
		r.Message = err.Error()
	}
	return r
}
