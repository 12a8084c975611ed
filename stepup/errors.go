package stepup

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every refusal of the gate wraps one of them; test with
// errors.Is. Messages never quote arguments or secrets.
var (
	// ErrNotFound means no ticket, credential or invite has that id.
	ErrNotFound = errors.New("stepup: not found")
	// ErrNotApproved means the ticket cannot run: it is pending, denied,
	// cancelled or expired.
	ErrNotApproved = errors.New("stepup: ticket not approved")
	// ErrConsumed means the approval was already used: the ticket ran or is
	// running.
	ErrConsumed = errors.New("stepup: approval already used")
	// ErrExpired means the ticket's expiry has passed.
	ErrExpired = errors.New("stepup: approval expired")
	// ErrResolved means the ticket was already decided.
	ErrResolved = errors.New("stepup: ticket already decided")
	// ErrEffectChanged means the stored effect no longer hashes to the
	// approved digest (a referenced file changed, say); it does not run.
	ErrEffectChanged = errors.New("stepup: action differs from what was approved")
	// ErrBadAssertion means an approver's answer did not verify: wrong
	// challenge, origin or RP ID, a missing flag, a bad signature.
	ErrBadAssertion = errors.New("stepup: approval evidence does not verify")
	// ErrUnknownCredential means the answer was signed by a credential that
	// is not enrolled.
	ErrUnknownCredential = errors.New("stepup: credential not enrolled")
	// ErrCounter means the authenticator's signature counter did not
	// advance: a cloned or replayed authenticator.
	ErrCounter = errors.New("stepup: signature counter did not advance")
	// ErrNotPermitted means the approver may not decide this ticket: it is
	// the requester, an agent principal, or not in the approver group.
	ErrNotPermitted = errors.New("stepup: approver must be a human other than the requester")
	// ErrExecutorFailed means the tool's executor returned an error. The
	// approval is spent: the call ran, or tried to. The executor's own
	// error is wrapped too; it is the integrator's text, so front ends do
	// not forward or log it.
	ErrExecutorFailed = errors.New("stepup: executor failed")
	// ErrNoExecutor means no executor is registered for the ticket's tool.
	ErrNoExecutor = errors.New("stepup: no executor for tool")
	// ErrInvite means an enrollment invite is unknown, used, expired, or
	// presented for another user than it was minted for.
	ErrInvite = errors.New("stepup: invalid invite")
	// ErrConfig means a gate, catalog or approver option is unusable.
	ErrConfig = errors.New("stepup: invalid configuration")
	// ErrStore means the store failed; the gate refused rather than guess.
	ErrStore = errors.New("stepup: store failure")
)

// AssertionError says which check an approver's answer failed. It wraps
// [ErrBadAssertion].
type AssertionError struct {
	// Check names the failed check: "malformed", "ceremony type",
	// "challenge", "origin", "rp id", "user presence", "user verification",
	// "signature", or the verifier's own description of another failure.
	Check string
}

func (e *AssertionError) Error() string { return fmt.Sprintf("%v: %s", ErrBadAssertion, e.Check) }

// Unwrap returns [ErrBadAssertion].
func (e *AssertionError) Unwrap() error { return ErrBadAssertion }
