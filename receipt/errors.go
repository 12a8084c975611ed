package receipt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
)

// Sentinel errors of [Parse], [NewTrustedKey], [ParseCOSEKey] and the
// arguments of [Verify].
var (
	// ErrTooLarge is [canon.ErrTooLarge], the one sentinel for input over a
	// size limit: a receipt over [MaxSize].
	//
	// Deprecated: test for canon.ErrTooLarge.
	ErrTooLarge       = canon.ErrTooLarge
	ErrMalformed      = errors.New("receipt: malformed")
	ErrUnsupportedKey = errors.New("receipt: unsupported public key")
	ErrPolicy         = errors.New("receipt: invalid verification policy")
)

// Sentinel errors of the checks of [Verify], one per check, in the order
// the checks run. A [*CheckError] wraps exactly one of them.
var (
	ErrFormat           = errors.New("receipt: not a well-formed asu.receipt.v1")
	ErrEffect           = errors.New("receipt: effect is not a canonical effect")
	ErrDigest           = errors.New("receipt: digest does not match the effect")
	ErrCardHash         = errors.New("receipt: card_hash does not match the card")
	ErrClientDataType   = errors.New("receipt: client data is not a webauthn.get assertion")
	ErrChallenge        = errors.New("receipt: signed challenge does not match the receipt")
	ErrOrigin           = errors.New("receipt: wrong origin")
	ErrRPID             = errors.New("receipt: relying party ID does not match")
	ErrUserPresence     = errors.New("receipt: user presence flag not set")
	ErrUserVerification = errors.New("receipt: user verification flag not set")
	ErrKeyMismatch      = errors.New("receipt: approver is not the trusted key's")
	ErrSignature        = errors.New("receipt: signature does not verify with the trusted key")
)

// CheckError is the failure of one check of [Verify]: the first one that
// failed, in the fixed order of [CheckNames].
type CheckError struct {
	Check CheckName // the check that failed
	Err   error     // the check's sentinel, e.g. ErrSignature
}

// Error names the failed check and why it failed.
func (e *CheckError) Error() string {
	return fmt.Sprintf("receipt: %s check failed: %s", e.Check, strings.TrimPrefix(e.Err.Error(), "receipt: "))
}

// Unwrap returns the check's sentinel error.
func (e *CheckError) Unwrap() error { return e.Err }
