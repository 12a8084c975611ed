package passkey

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/stepup"
)

// Refusals particular to passkeys. Any other answer that does not verify
// is an [*AssertionError], which wraps [stepup.ErrBadAssertion].
var (
	// ErrUnknownCredential means the answer was signed by a credential that
	// is not enrolled.
	ErrUnknownCredential = errors.New("passkey: credential not enrolled")
	// ErrCounter means the authenticator's signature counter did not
	// advance: a cloned or replayed authenticator.
	ErrCounter = errors.New("passkey: signature counter did not advance")
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

// checkApprover refuses names that cannot be an approver's: agents, and
// the names the gate uses for its own approvals.
func checkApprover(user string) error {
	switch {
	case user == "", strings.ContainsAny(user, "\x00"):
		return fmt.Errorf("%w: empty or malformed approver name", stepup.ErrNotPermitted)
	case strings.HasPrefix(user, "agent:"):
		return fmt.Errorf("%w: approvers are people, not agents", stepup.ErrNotPermitted)
	case strings.HasPrefix(user, "policy:"), strings.HasPrefix(user, "grant:"):
		return fmt.Errorf("%w: the name is reserved for the gate's own approvals", stepup.ErrNotPermitted)
	}
	return nil
}
