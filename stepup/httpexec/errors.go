package httpexec

import (
	"errors"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/internal/signed"
)

// Errors of [Executor.Execute]: each wraps one of them, so the gate's
// audit row and the operator's log say what the tool answered, never the
// arguments.
var (
	// ErrToolFailed means the tool answered with a status that is not 2xx,
	// on every attempt that was allowed, or with a 4xx, which is final.
	ErrToolFailed = errors.New("httpexec: the tool failed")
	// ErrUnreachable means no attempt got an answer: connection refused,
	// reset, or the per-attempt timeout passed.
	ErrUnreachable = errors.New("httpexec: the tool did not answer")
	// ErrResponseTooLarge means the tool's answer was longer than
	// [Options].MaxResponseBytes. The tool did answer 2xx, so the effect
	// may have happened: it is not retried.
	ErrResponseTooLarge = signed.ErrResponseTooLarge
)

// Errors of [Verify]: each wraps one of them.
var (
	// ErrSecret means the shared secret is shorter than [MinSecretBytes].
	ErrSecret = signed.ErrSecret
	// ErrMalformed means the request is not one an Executor sends: a
	// missing or malformed header, a body that is not the effect message,
	// or headers that disagree with the body.
	ErrMalformed = errors.New("httpexec: malformed request")
	// ErrBadSignature means no signature in the request is the HMAC of
	// its canonical string under the secret.
	ErrBadSignature = signed.ErrBadSignature
	// ErrStale means the request's timestamp is outside the replay window.
	ErrStale = signed.ErrStale
	// ErrTooLarge means the request body is longer than [MaxRequestBytes].
	ErrTooLarge = canon.ErrTooLarge
	// ErrWrongTool means the request is genuine, signed by the gate, but
	// for a tool other than the one the verifier was given: sent to the
	// wrong URL, or replayed from one tool to another that shares its
	// secret. It is never run.
	ErrWrongTool = errors.New("httpexec: the request is for another tool")
)
