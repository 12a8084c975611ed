package plug

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/canon"
)

// Policy decides every proposed call before anything runs. It is code
// outside the agent's reach. An error is a denial (fail closed).
type Policy interface {
	Decide(ctx context.Context, p Proposal) (Decision, error)
}

// ParsedDecider is an optional capability of a [Policy] that reads a
// proposal's arguments from [Proposal.Parsed] alone. The gate then calls
// DecideParsed instead of Decide, with Parsed set and Args nil, and does
// not copy the arguments' text for the policy: a large call's arguments
// are then shared with the policy as an immutable [canon.Value] rather
// than copied for each decision. DecideParsed must decide as Decide would
// with Args set to Parsed's canonical text.
type ParsedDecider interface {
	DecideParsed(ctx context.Context, p Proposal) (Decision, error)
}

// Proposal is what a policy decides on: the call with canonical arguments.
type Proposal struct {
	Tool string
	// Args is the canonical JSON object of the arguments, the policy's
	// own copy; nil for [ParsedDecider.DecideParsed].
	Args json.RawMessage
	// Parsed is Args parsed, as the gate parsed them once: a policy reads
	// the arguments here rather than parsing Args again. A caller of
	// Decide other than the gate may leave it zero.
	Parsed    canon.Value
	Task      string
	Step      string
	Session   string
	Principal canon.Principal
	Taint     []string
}

// Verdict is a policy's answer.
type Verdict string

// Verdicts.
const (
	Allow         Verdict = "allow"
	Deny          Verdict = "deny"
	NeedsApproval Verdict = "needs_approval"
)

// Decision is a policy's verdict with what the gate needs to act on it.
type Decision struct {
	Verdict Verdict
	// Reason says why, in words meant for the model and the audit log.
	Reason string
	// PolicyVersion is recorded with every decision and bound into the
	// effect's digest. It must not be empty.
	PolicyVersion string
	// Class is the tool's effect class (card.ClassRead, ...).
	Class string
	// Title and Hints present the tool on the approval card.
	Title string
	Hints Hints
	// Trusted lists domains whose look-alikes the card flags.
	Trusted []string
	// Description is the tool server's description: untrusted text, shown
	// only in the card's untrusted region.
	Description string
	// Refs are the references the arguments name; the gate resolves them
	// to content hashes before hashing the effect.
	Refs []canon.Ref
	// Audience names the executor that runs the call.
	Audience string
	// Approvers names the approver group that may approve (a gate's
	// WithApproverGroup); empty means the user the call runs on behalf of,
	// and nobody else. The requester's agent and delegations never approve.
	Approvers string
	// Quorum is how many distinct approvers must approve; zero or one
	// means one. A model never counts towards it.
	Quorum int
	// Timeout says how long approvers have and what happens after.
	Timeout Timeout
}

// Outcome is what happens to a ticket nobody decided in time.
type Outcome string

// Timeout outcomes.
const (
	// OutcomeCancel cancels the ticket (the default).
	OutcomeCancel Outcome = "cancel"
	// OutcomeEscalate lets another approver group decide for a further
	// Timeout.After, then cancels.
	OutcomeEscalate Outcome = "escalate"
	// OutcomeAlternative cancels the ticket and proposes a named safe
	// alternative tool with the same arguments (a draft instead of a send).
	OutcomeAlternative Outcome = "alternative"
)

// Timeout bounds a pending ticket.
type Timeout struct {
	// After is how long approvers have; zero means the gate's default.
	After time.Duration
	// Outcome applies when After passes without a decision; empty means
	// OutcomeCancel.
	Outcome Outcome
	// EscalateTo is the approver group that decides after After, for
	// OutcomeEscalate.
	EscalateTo string
	// Alternative is the tool proposed instead, for OutcomeAlternative.
	Alternative string
}

// Route is who may approve a parked ticket and until when.
type Route struct {
	Approvers string
	Timeout   Timeout
	// Quorum is how many distinct approvers must approve (zero: one).
	Quorum int
}

// Router is an optional capability of a [Policy]: the route of a tool's
// tickets under a policy version, without deciding a call again. The gate
// uses it on the approver's hot path; a policy without it is asked to
// decide the stored call again.
type Router interface {
	Route(tool, policyVersion string) (Route, bool)
}
