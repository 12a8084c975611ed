package passkey

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Refusals particular to passkeys. Any other answer that does not verify
// is an [*AssertionError], which wraps [stepup.ErrBadAssertion].
var (
	// ErrUnknownCredential means the answer was signed by a credential that
	// is not enrolled, or (with [RequireSeal]) that the enrollment did not
	// seal.
	ErrUnknownCredential = errors.New("passkey: credential not enrolled")
	// ErrCounter is [store.ErrCounter]: the authenticator's signature
	// counter did not advance, a cloned or replayed authenticator.
	ErrCounter = store.ErrCounter
	// ErrInvite means an enrollment invite is unknown, used, expired, or
	// presented for another user than it was minted for.
	ErrInvite = errors.New("passkey: invalid invite")
)

// AssertionError says which check an approver's answer failed. It wraps
// [stepup.ErrBadAssertion].
type AssertionError struct {
	// Check names the failed check: "malformed", "ceremony type",
	// "challenge", "origin", "rp id", "user presence", "user verification",
	// "signature", or the verifier's own description of another failure.
	Check string
}

func (e *AssertionError) Error() string {
	return fmt.Sprintf("%v: %s", stepup.ErrBadAssertion, e.Check)
}

// Unwrap returns [stepup.ErrBadAssertion].
func (e *AssertionError) Unwrap() error { return stepup.ErrBadAssertion }

// checkApprover refuses names that cannot be an approver's: anything but
// a well-formed person's principal id ("user:name", canon.CheckPrincipalID),
// so agents, the gate's reserved names and look-alike spellings of either
// are never invited.
func checkApprover(user string) error {
	switch {
	case strings.HasPrefix(user, canon.PrefixAgent):
		return fmt.Errorf("%w: approvers are people, not agents", stepup.ErrNotPermitted)
	case canon.Reserved(user):
		return fmt.Errorf("%w: the name is reserved for the gate's own approvals", stepup.ErrNotPermitted)
	case canon.CheckPrincipalID(user) != nil || !strings.HasPrefix(user, canon.PrefixUser):
		return fmt.Errorf("%w: an approver is named by a person's principal id (user:name)", stepup.ErrNotPermitted)
	}
	return nil
}
