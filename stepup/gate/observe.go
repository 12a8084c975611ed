package gate

// ScopeName is the instrumentation scope of the gate's meter.
const ScopeName = "github.com/agentstepup/asu/stepup/gate"

// Attribute keys of the gate's metrics. Every value is one of a small,
// fixed set (or, for [AttrClass], the policy's effect classes), never a
// tool name, principal, ticket id or argument, so that a misbehaving
// agent cannot grow a metric's cardinality.
const (
	// AttrDecision is a decision's kind: the audit row's decision
	// ("allow", "deny", "needs_approval", "approved", "denied",
	// "cancelled", "revoked"), "merged" for a request merged with an
	// identical pending one, or "expired" for a ticket nobody decided in
	// time (its audit row says "cancelled").
	AttrDecision = "asu.decision"
	// AttrClass is the ticket's effect class as the policy named it
	// ("none" when the call was refused before the policy classed it).
	AttrClass = "asu.effect_class"
	// AttrFloodScope is whose limit refused a request: "session",
	// "agent", "user", "approver", or "unknown" (a pending cap, which the
	// store enforces per session and per user, or flood control that
	// could not decide).
	AttrFloodScope = "asu.flood.scope"
	// AttrFloodLimit is which limit refused it: "rate", "lockout",
	// "pending_cap" or "unavailable".
	AttrFloodLimit = "asu.flood.limit"
	// AttrOutcome is what became of a call at execute: "executed",
	// "failed" (the executor returned an error), "abandoned" (a reclaimed
	// execution that could not run), "unknown" (it may have run; the
	// outcome is not recorded yet) or "refused" (nothing was spent).
	AttrOutcome = "asu.execution.outcome"
	// AttrPracticeClass is the attack class of a practice request
	// ([WithPractice]): "lookalike-domain" or "amount-tenfold".
	AttrPracticeClass = "asu.practice.class"
	// AttrPracticeOutcome is what the approver did with a practice
	// request: "caught" (denied it) or "missed" (approved it).
	AttrPracticeOutcome = "asu.practice.outcome"
)
