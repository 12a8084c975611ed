package gate

import "strings"

// The gate records who approved each ticket. People are named by their
// principal id; the gate's own approvals use these reserved prefixes, which
// no person's name may start with.
const (
	policyApprover = "policy:" // + policy version: the policy allowed the call
	grantApprover  = "grant:"  // + grant id: a grant covered the call
	agentPrefix    = "agent:"
)

// isAgent reports whether a principal id is an agent's.
func isAgent(id string) bool { return strings.HasPrefix(id, agentPrefix) }

// reservedApprover reports whether an approver name is one of the gate's
// own, never a person's.
func reservedApprover(id string) bool {
	return strings.HasPrefix(id, policyApprover) || strings.HasPrefix(id, grantApprover)
}
