package stepup

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/canon"
)

// Runtime is all an agent runtime ever gets from the gate: propose a call,
// wait for its decision, execute it by ticket id. It has no way to approve,
// and Execute takes no arguments: what runs is what was stored at Propose.
// [*Gate] implements it in-process; an HTTP client implements it remotely.
type Runtime interface {
	// Propose submits c. A refusal (policy, flood control, a malformed
	// call) is a denied ticket with a nil error. A call over a size limit
	// is refused with an error wrapping [ErrTooLarge]; the in-process gate
	// also returns its denied ticket, whose id names the refusal's audit
	// row. A store failure is [ErrStore]: nothing was decided, propose
	// again.
	Propose(ctx context.Context, c Call) (Ticket, error)
	Wait(ctx context.Context, id TicketID) (Ticket, error)
	Execute(ctx context.Context, id TicketID) (Result, error)
}

// Call is a tool call an agent proposes.
type Call struct {
	// Tool is the catalog name of the tool.
	Tool string
	// Args is the JSON object of arguments.
	Args json.RawMessage
	// Task and Step identify the unit of work; Session groups the calls of
	// one agent run for taint, caps and merging.
	Task, Step, Session string
	// Principal is the chain the call acts for: the user, the agent and
	// any delegations. Agents are named with the "agent:" prefix. No
	// person among the delegations may decide the call, so whoever sets
	// them chooses who may not: a runtime takes them from its own
	// configuration, never from the model, and the HTTP agent API accepts
	// as delegations only people its runtime token acts for.
	Principal canon.Principal
	// Taint lists the untrusted content the session has seen, e.g.
	// "read web page https://example.org/offer". Non-empty taint makes
	// external and irreversible calls need approval.
	Taint []string
	// Rationale is the agent's own explanation. It is UNTRUSTED and only
	// ever shown in the card's region labelled as written by the agent.
	Rationale string
	// Grant names a delegated approval the call claims to be covered by
	// (see [ApprovalDesk.Grant]). It is only a claim: when the policy says
	// the call needs approval, the gate uses the grant if it covers the
	// call exactly, and otherwise asks a person as if no grant were named.
	Grant string
}

// TicketID names a ticket. It is unguessable, so it may appear in links.
type TicketID string

// Status is where a ticket is, as the runtime sees it.
type Status string

// Ticket statuses.
const (
	StatusAllowed   Status = "allowed"   // policy allowed it; Execute runs it
	StatusDenied    Status = "denied"    // refused; Reason says why
	StatusPending   Status = "pending"   // waiting for an approver
	StatusApproved  Status = "approved"  // an approver approved it; Execute runs it
	StatusExpired   Status = "expired"   // nobody decided, or it was not run, in time
	StatusCancelled Status = "cancelled" // withdrawn, or timed out to cancel
	StatusRevoked   Status = "revoked"   // approved, then revoked before it ran; never runs
	StatusExecuting Status = "executing" // consumed; running, or interrupted and due to be re-run with its key
	StatusExecuted  Status = "executed"  // ran once and the tool reported success; never again
	StatusFailed    Status = "failed"    // ran once and the tool reported a failure; never again
	StatusAbandoned Status = "abandoned" // consumed but never run: the action changed, or no executor; never runs
)

// ReasonNoDecision starts the Reason of a ticket the gate cancelled
// because nobody decided it before it expired. Any other cancelled ticket
// was withdrawn by its agent before a decision.
const ReasonNoDecision = "no decision in time"

// Final reports whether a ticket in status s will never change again.
func (s Status) Final() bool {
	switch s {
	case StatusDenied, StatusExpired, StatusCancelled, StatusRevoked, StatusExecuted, StatusFailed, StatusAbandoned:
		return true
	}
	return false
}

// Runnable reports whether Execute may run a ticket in status s.
func (s Status) Runnable() bool { return s == StatusAllowed || s == StatusApproved }

// Ticket is the gate's answer about one proposed call.
type Ticket struct {
	ID     TicketID
	Status Status
	Tool   string
	// Digest is the canonical effect's digest: what an approval binds.
	Digest canon.Digest
	// Reason explains a denial, cancellation or expiry in words meant to go
	// back to the model as an observation.
	Reason string
	// ExpiresAt bounds both the approver's decision and the execution.
	ExpiresAt time.Time
	// Next names the ticket the gate proposed instead, when a timeout's
	// outcome was a safe alternative.
	Next TicketID
	// RetryAfter, on a call denied by flood control (rate limited or
	// locked out), is how long until the session could be admitted again
	// if nothing else changes.
	RetryAfter time.Duration
}

// Result is what Execute returns.
type Result struct {
	Ticket TicketID
	// Output is the executor's JSON output.
	Output json.RawMessage
	// IdempotencyKey is the key the executor was run with; a recovered
	// execution reuses it.
	IdempotencyKey string
}

// Canceller is an optional capability of a [Runtime]: withdraw a pending
// ticket the agent no longer waits for (its host gave up on the call), so
// that an approval given later runs nothing and tells the approver so. A
// ticket already decided is not changed: Cancel fails with
// [ErrResolved]. The in-process gate and the HTTP client implement it.
type Canceller interface {
	Cancel(ctx context.Context, id TicketID, reason string) (Ticket, error)
}
