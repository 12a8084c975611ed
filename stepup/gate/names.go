package gate

import (
	"strings"

	"github.com/agentstepup/asu/card"
)

// GrantTool is the tool of the tickets that ask an approver to issue a
// grant ([Desk.Grant]). Tool names starting with "asu." are the
// gate's own: a runtime proposing one is denied, and no executor may be
// registered for one.
const GrantTool = ReservedToolPrefix + "grant"

// ReservedToolPrefix starts the names of the gate's own tools.
const ReservedToolPrefix = "asu."

const (
	grantPolicyVersion = "asu.grant/v1"
	grantKeyPrefix     = "asu.grant-" // idempotency key of a grant ticket: prefix + ticket id
	grantTitle         = "Delegate approval (grant)"
	grantReason        = "a grant lets the agent run every call it covers without asking you again"
)

// ReservedTool reports whether tool names one of the gate's own tools
// (prefix [ReservedToolPrefix]): a runtime proposing one is denied, and no
// executor or catalog entry may use one.
func ReservedTool(tool string) bool { return strings.HasPrefix(tool, ReservedToolPrefix) }

// grantDecision is the gate's own fixed decision about [GrantTool]
// tickets: the approver's own passkey, any time within the gate's TTL.
func grantDecision() Decision {
	return Decision{Verdict: NeedsApproval, Reason: grantReason, PolicyVersion: grantPolicyVersion,
		Class: card.ClassIrreversible, Title: grantTitle, Audience: "asu",
		Hints: card.Hints{Order: []string{"grant", "uses", "expires_at"}, Labels: map[string]string{
			"grant": "what it covers", "uses": "calls it covers", "expires_at": "expires at (UTC)"}}}
}

// ExternalKeyPrefix marks the idempotency keys of tickets consumed by an
// executor in another service (package exectoken): the gate's recovery
// leaves them to that executor.
const ExternalKeyPrefix = "exec-"
