package core

import (
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
)

const (
	GrantPolicyVersion = "asu.grant/v1"
	GrantKeyPrefix     = "asu.grant-" // idempotency key of a grant ticket: prefix + ticket id
	grantTitle         = "Delegate approval (grant)"
	grantReason        = "a grant lets the agent run every call it covers without asking you again"
)

// GrantDecision is the gate's own fixed decision about [GrantTool]
// tickets: the approver's own passkey, any time within the gate's TTL.
func GrantDecision() plug.Decision {
	return plug.Decision{Verdict: plug.NeedsApproval, Reason: grantReason, PolicyVersion: GrantPolicyVersion,
		Class: card.ClassIrreversible, Title: grantTitle, Audience: "asu",
		Hints: plug.Hints{Order: []string{"grant", "uses", "expires_at"}, Labels: map[string]string{
			"grant": "what it covers", "uses": "calls it covers", "expires_at": "expires at (UTC)"}}}
}
