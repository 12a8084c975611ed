// Package stepup is the runtime's contract with the gate: all an agent
// runtime ever gets. It depends on the standard library and package canon
// only, so a runtime that imports it, and the HTTP client
// ([github.com/agentstepup/asu/stepup/remote]), links none of the
// approver's, the policy's or the stores' stacks.
//
// # Three calls
//
// A [Runtime] proposes a [Call], waits for its [Ticket] to be decided and
// executes it by ticket id. Execute takes no arguments: what runs is the
// call the gate stored at Propose, re-hashed right before it runs. A
// runtime has no way to approve anything. The in-process gate
// ([github.com/agentstepup/asu/stepup/gate]) and the HTTP client both
// implement Runtime, and the optional [Canceller] to withdraw a pending
// ticket its host gave up on.
//
// # Tickets and statuses
//
// Every call gets a ticket. Allowed and denied calls are answered at once
// (a denial's Reason is meant to go back to the model as an observation);
// a call that needs a person comes back pending. A ticket's [Status] is
// allowed or approved (runnable), pending, denied, expired, cancelled or
// revoked (never run), executing (spent; running, or interrupted and due
// to run again with the same idempotency key), and at the end executed,
// failed (the tool reported a failure) or abandoned (spent, but the action
// had changed, so it never ran). [Status.Final] says whether it can change.
//
// # Errors
//
// Every refusal wraps one of this package's sentinels, on both sides of
// the wire, tested with errors.Is. An error from Execute tells the
// runtime what happened to the effect: not run ([ErrNotApproved],
// [ErrExpired], [ErrRevoked], [ErrPolicyChanged], [ErrEffectChanged],
// [ErrNoExecutor]: safe to propose again), already run or running
// ([ErrConsumed]), ran and failed ([ErrExecutorFailed]), or may have run
// ([ErrOutcomeUnknown]: do not blind-retry; Wait for the final status).
//
// There is one sentinel per meaning in the module: a store's, a grant's
// or an approver's refusal that means what one of these means is this
// sentinel itself (store.ErrNotFound is [ErrNotFound]), so errors.Is
// holds whichever name a caller tests.
package stepup
