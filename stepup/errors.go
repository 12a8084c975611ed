package stepup

import "errors"

// Sentinel errors. Every refusal of the gate, in process or over HTTP,
// wraps one of them; test with errors.Is. Messages never quote arguments
// or secrets.
//
// An error from [Runtime.Execute] says what happened to the effect:
//
//   - not run, safe to propose again: [ErrNotFound], [ErrNotApproved],
//     [ErrExpired], [ErrRevoked], [ErrPolicyChanged], [ErrEffectChanged],
//     [ErrNoExecutor], and [ErrStore] when it does not also wrap
//     [ErrOutcomeUnknown];
//   - already run or running, never run it again: [ErrConsumed];
//   - ran, and the tool reported a failure: [ErrExecutorFailed];
//   - may have run: [ErrOutcomeUnknown]. Do not blind-retry; wait for the
//     ticket's final status with [Runtime.Wait].
var (
	// ErrNotFound means no ticket, credential, grant or invite has that id.
	ErrNotFound = errors.New("stepup: not found")
	// ErrNotApproved means the ticket cannot run: it is pending, denied,
	// cancelled or expired.
	ErrNotApproved = errors.New("stepup: ticket not approved")
	// ErrConsumed means the approval was already used: the ticket ran or is
	// running.
	ErrConsumed = errors.New("stepup: approval already used")
	// ErrExpired means the ticket's expiry has passed.
	ErrExpired = errors.New("stepup: approval expired")
	// ErrRevoked means the approval, credential, grant or invite was
	// revoked; a revoked approval never runs.
	ErrRevoked = errors.New("stepup: revoked")
	// ErrResolved means the ticket was already decided.
	ErrResolved = errors.New("stepup: ticket already decided")
	// ErrPolicyChanged means the ticket was decided under another policy
	// version than the gate's current one: it does not run. Propose the
	// call again to have it decided under the current policy.
	ErrPolicyChanged = errors.New("stepup: policy changed since the ticket was decided")
	// ErrEffectChanged means the stored effect no longer hashes to the
	// approved digest (a referenced file changed, say); it does not run.
	ErrEffectChanged = errors.New("stepup: action differs from what was approved")
	// ErrBadAssertion means an approver's answer, or the evidence stored
	// with an approval, did not verify. Approvers wrap it.
	ErrBadAssertion = errors.New("stepup: approval evidence does not verify")
	// ErrNotPermitted means the approver may not decide this ticket: it is
	// the requester, an agent principal, or neither the ticket's user nor
	// in the approver group the policy names.
	ErrNotPermitted = errors.New("stepup: approver may not decide this ticket")
	// ErrTooFast means an approval came sooner after its card was first
	// shown than the gate's dwell time for the call's class allows
	// (gate.WithDwell): the approver is asked to read it and approve again.
	ErrTooFast = errors.New("stepup: approved too soon after the card was shown")
	// ErrExecutorFailed means the tool's executor returned an error. The
	// approval is spent: the call ran, or tried to. The executor's own
	// error is wrapped too; it is the integrator's text, so front ends do
	// not forward or log it.
	ErrExecutorFailed = errors.New("stepup: executor failed")
	// ErrOutcomeUnknown means the executor may have run but its outcome
	// could not be recorded (the store failed after the call was
	// consumed). The ticket stays executing; the gate that owns it, or
	// another after its lease expires, re-runs it with the same
	// idempotency key. Do not propose the call again.
	ErrOutcomeUnknown = errors.New("stepup: execution outcome unknown")
	// ErrNoExecutor means no executor is registered for the ticket's tool.
	ErrNoExecutor = errors.New("stepup: no executor for tool")
	// ErrConfig means a gate, catalog, approver or client option is
	// unusable.
	ErrConfig = errors.New("stepup: invalid configuration")
	// ErrStore means the store failed; the gate refused rather than guess.
	ErrStore = errors.New("stepup: store failure")
)
