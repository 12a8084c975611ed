package core

import (
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// The gate records who approved each ticket. People are named by their
// principal id (canon.CheckPrincipalID); the gate's own approvals use the
// kinds canon reserves for it.
const (
	PolicyApprover = canon.PrefixPolicy // + policy version: the policy allowed the call
	GrantApprover  = canon.PrefixGrant  // + grant id: a grant covered the call
)

// ReservedApprover reports whether an approver name is one of the gate's
// own, never a person's.
func ReservedApprover(id string) bool { return canon.Reserved(id) }

// CheckPerson refuses an id that cannot name a person who approves: it
// must be a well-formed "user:" id.
func CheckPerson(id string) error {
	if err := canon.CheckPrincipalID(id); err != nil || !strings.HasPrefix(id, canon.PrefixUser) {
		return fmt.Errorf("%w: %q is not a person's principal id (user:name)", stepup.ErrNotPermitted, id)
	}
	return nil
}

// PrincipalOf is the principal of a person acting for themselves.
func PrincipalOf(user string) canon.Principal { return canon.Principal{User: user} }
