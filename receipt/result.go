package receipt

import (
	"time"

	"github.com/agentstepup/asu/canon"
)

// CheckName names one check of [Verify].
type CheckName string

// The checks of [Verify], in the order they run.
const (
	CheckFormat         CheckName = "format"           // FormatV1, 32-byte nonce, times from 1970 to 9999
	CheckEffect         CheckName = "effect"           // effect is a complete canon.Effect in canonical form
	CheckDigest         CheckName = "digest"           // SHA-256 of the canonical effect equals digest
	CheckCardHash       CheckName = "card_hash"        // CardHash(card) equals card_hash
	CheckClientDataType CheckName = "client_data_type" // client data parses strictly (no member twice, none respelt) and its type is webauthn.get
	CheckChallenge      CheckName = "challenge"        // Challenge(digest, nonce, expires_at, card_hash) is the signed challenge
	CheckOrigin         CheckName = "origin"           // client data origin equals origin, which the policy allows
	CheckRPID           CheckName = "rp_id"            // rp_id and the authenticator data's RP ID hash match the policy
	CheckUserPresent    CheckName = "user_present"     // authenticator flag UP
	CheckUserVerified   CheckName = "user_verified"    // authenticator flag UV
	CheckPublicKey      CheckName = "public_key"       // embedded key is the trusted key
	CheckSignature      CheckName = "signature"        // the trusted key signed authenticator_data ‖ SHA-256(client_data_json)
	CheckExpiry         CheckName = "expiry"           // reported, never fails
)

// CheckNames lists every check of [Verify] in the order it runs them.
func CheckNames() []CheckName {
	return []CheckName{CheckFormat, CheckEffect, CheckDigest, CheckCardHash, CheckClientDataType,
		CheckChallenge, CheckOrigin, CheckRPID, CheckUserPresent, CheckUserVerified,
		CheckPublicKey, CheckSignature, CheckExpiry}
}

// Outcome is how one check ended.
type Outcome string

// Outcomes of a [Check].
const (
	Pass     Outcome = "pass"     // the check held
	Fail     Outcome = "fail"     // the check did not hold; Err says why
	NotRun   Outcome = "not_run"  // an earlier failure left nothing to check
	Reported Outcome = "reported" // information that is not judged
)

// Check is the outcome of one check of [Verify].
type Check struct {
	Name    CheckName `json:"name"`
	Outcome Outcome   `json:"outcome"`
	// Detail says what failed or what is reported; it never quotes the
	// effect's arguments.
	Detail string `json:"detail,omitempty"`
	// Err is the check's sentinel, wrapped, when Outcome is Fail.
	Err error `json:"-"`
}

// Result is what [Verify] established about a receipt. When Valid is
// true, the trusted key's holder approved exactly Effect (whose digest is
// Digest) after being shown the card whose hash is CardHash, with user
// presence and user verification, for the given nonce and expiry.
// Approver, CredentialID and ApprovedAt are what the gate recorded;
// nothing signs them.
type Result struct {
	Valid  bool    `json:"valid"`
	Checks []Check `json:"checks"`

	Effect     *canon.Effect `json:"effect,omitempty"` // nil when the effect check failed
	Digest     canon.Digest  `json:"digest"`
	CardHash   canon.Digest  `json:"card_hash"`
	ExpiresAt  time.Time     `json:"expires_at"`
	ApprovedAt time.Time     `json:"approved_at"`
	Approver   string        `json:"approver"`
	Algorithm  string        `json:"algorithm"`
	// SignCount is the authenticator's signature counter (0 when the
	// authenticator keeps none).
	SignCount uint32 `json:"sign_count"`
}

// Err returns the first failed check as a [*CheckError], or nil when the
// receipt is valid.
func (r *Result) Err() error {
	for _, c := range r.Checks {
		if c.Outcome == Fail {
			return &CheckError{Check: c.Name, Err: c.Err}
		}
	}
	return nil
}

// Check returns the outcome of the named check.
func (r *Result) Check(name CheckName) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Expired reports whether the approval window had closed at now. A valid
// receipt of an expired approval is still valid evidence of what was
// approved; whether an action may still run is the gate's decision.
func (r *Result) Expired(now time.Time) bool { return !now.Before(r.ExpiresAt) }
