// Package receipt is asu's portable evidence: a receipt of an approval that
// anyone holding only the approver's public key can verify offline, the
// challenge the approver's passkey signs, receipts of a quorum, and the
// idempotency key an approval's execution carries.
//
// # Receipts
//
// A [Receipt] is a JSON document in the format named by [FormatV1]. It
// carries the canonical effect that was approved, its digest, the card the
// approver saw and its hash, the nonce and expiry the challenge committed to,
// and the raw WebAuthn assertion (authenticator data, client data JSON,
// signature). Binary fields are base64url without padding ([Bytes]), times
// are integer Unix seconds. [Parse] reads one strictly; [Receipt.Marshal]
// writes one.
//
// # Verifying
//
// [Verify] checks a receipt against a public key obtained out of band (a
// [TrustedKey]) and a [Policy] naming the relying party ID and origins. It
// runs every check in a fixed order and returns a [Result] listing each one
// and its outcome; the first failure is also returned as a [*CheckError]
// wrapping a sentinel such as [ErrSignature] or [ErrChallenge]. The key
// embedded in a receipt proves nothing and is only compared with the trusted
// one. Expiry is reported, not judged: a receipt remains evidence of what was
// approved after its approval window closed.
//
// # The challenge
//
// [Challenge] is what the approver's passkey signs:
//
//	SHA-256("asu/v1/approve" ‖ 0x00 ‖ digest[32] ‖ nonce[32] ‖ uint64be(expires_at) ‖ card_hash[32])
//
// so a signature commits to one exact effect, one nonce, one expiry and the
// card the approver saw. Verifiers in other languages recompute it from the
// receipt's fields.
//
// # Dependencies
//
// The package imports only [github.com/agentstepup/asu/canon], go-webauthn's
// COSE key code and the standard library, so an auditor imports little: a
// receipt verifies with nothing of the gate, its stores or its audit trail
// linked (a test holds this). The audit chain and its checkpoints are in
// [github.com/agentstepup/asu/audit], the approval figures in
// [github.com/agentstepup/asu/audit/figures].
package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/canon"
)

// FormatV1 is the value of a version 1 receipt's format field.
const FormatV1 = "asu.receipt.v1"

// MaxSize bounds the encoded size of a receipt [Parse] accepts: room for an
// effect of [canon.MaxEffect] bytes, the most canon seals, a card at
// [CardLimits], and the rest.
const MaxSize = canon.MaxEffect + maxCardBytes + 64<<10

// maxCardBytes and maxCardDepth bound card JSON. A card nests about four
// levels for each level of the arguments it shows, and escapes make it
// larger than they are; these equal card.HashLimits, and a test keeps them
// equal, so every card the gate can render has a receipt that verifies.
const (
	maxCardBytes = 16 << 20
	maxCardDepth = 4*canon.DefaultMaxDepth + 8
)

// CardLimits returns the limits under which card JSON is canonicalized
// for its hash.
func CardLimits() canon.Limits { return canon.Limits{MaxBytes: maxCardBytes, MaxDepth: maxCardDepth} }

// CardTag separates card hashes from every other hash in asu.
const CardTag = "asu/v1/card"

// Receipt is the evidence of one approval, in the [FormatV1] layout. The
// JSON field names and encodings are fixed: verifiers in other languages
// read them.
type Receipt struct {
	// Format is always FormatV1.
	Format string `json:"format"`
	// Effect is the canonical effect object that was approved.
	Effect json.RawMessage `json:"effect"`
	// Digest is the SHA-256 of Effect's canonical form.
	Digest canon.Digest `json:"digest"`
	// Card is the card model the approver saw, as JSON.
	Card json.RawMessage `json:"card"`
	// CardHash is [CardHash] of Card.
	CardHash canon.Digest `json:"card_hash"`
	// Nonce is the 32-byte single-use nonce the challenge commits to.
	Nonce Bytes `json:"nonce"`
	// ExpiresAt is the end of the approval window, Unix seconds; the
	// challenge commits to it.
	ExpiresAt int64 `json:"expires_at"`
	// ApprovedAt is when the gate accepted the assertion, Unix seconds, as
	// the gate claims it: nothing signs it.
	ApprovedAt int64 `json:"approved_at"`
	// Approver names who approved and with which credential.
	Approver Approver `json:"approver"`
	// RPID is the WebAuthn relying party ID the credential is scoped to.
	RPID string `json:"rp_id"`
	// Origin is the web origin the approval page was served from.
	Origin string `json:"origin"`
	// Assertion is the WebAuthn assertion exactly as the authenticator and
	// the browser produced it.
	Assertion Assertion `json:"assertion"`
}

// Approver identifies the approver of a receipt. Only PublicKey is checked
// by [Verify], against the trusted key; User and CredentialID are what the
// gate recorded.
type Approver struct {
	// User is the approver's user name in the gate.
	User string `json:"user"`
	// CredentialID is the WebAuthn credential ID of the passkey.
	CredentialID Bytes `json:"credential_id"`
	// PublicKey is the credential's COSE_Key, carried for convenience.
	PublicKey Bytes `json:"public_key"`
}

// Assertion is a WebAuthn assertion response.
type Assertion struct {
	// AuthenticatorData is the authenticator data the signature covers.
	AuthenticatorData Bytes `json:"authenticator_data"`
	// ClientDataJSON is the exact client data the browser passed to the
	// authenticator; the signature covers its SHA-256.
	ClientDataJSON Bytes `json:"client_data_json"`
	// Signature is over AuthenticatorData ‖ SHA-256(ClientDataJSON).
	Signature Bytes `json:"signature"`
	// UserHandle is the WebAuthn user handle the authenticator returned;
	// empty when it returned none.
	UserHandle Bytes `json:"user_handle"`
}

// Bytes is binary data carried in JSON as base64url without padding.
type Bytes []byte

var b64 = base64.RawURLEncoding.Strict()

// MarshalText encodes b as base64url without padding.
func (b Bytes) MarshalText() ([]byte, error) {
	out := make([]byte, b64.EncodedLen(len(b)))
	b64.Encode(out, b)
	return out, nil
}

// UnmarshalText decodes base64url without padding. It refuses padding,
// line breaks and non-zero trailing bits, so every value has one encoding.
func (b *Bytes) UnmarshalText(text []byte) error {
	d, err := decodeB64(text)
	if err != nil {
		return err
	}
	*b = d
	return nil
}

// decodeB64 is the one strict base64url decoder of the package. The
// standard decoder skips \r and \n; this one refuses them.
func decodeB64(text []byte) ([]byte, error) {
	if bytes.ContainsAny(text, "\r\n") {
		return nil, fmt.Errorf("%w: line break in base64url", ErrMalformed)
	}
	out := make([]byte, b64.DecodedLen(len(text)))
	n, err := b64.Decode(out, text)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid base64url", ErrMalformed)
	}
	return out[:n], nil
}

// CardHash returns the hash of a card model given as JSON:
//
//	SHA-256("asu/v1/card" ‖ 0x00 ‖ JCS(card))
//
// It fails when cardJSON is not JSON that canon can canonicalize.
func CardHash(cardJSON []byte) (canon.Digest, error) {
	c, err := CardLimits().Canonicalize(cardJSON)
	if err != nil {
		return canon.Digest{}, fmt.Errorf("card: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(CardTag))
	h.Write([]byte{0})
	h.Write(c)
	var d canon.Digest
	h.Sum(d[:0])
	return d, nil
}

// Keys of each JSON object in a receipt, exactly as spelled: encoding/json
// matches keys case-insensitively, so Parse checks them first.
var (
	receiptKeys   = []string{"format", "effect", "digest", "card", "card_hash", "nonce", "expires_at", "approved_at", "approver", "rp_id", "origin", "assertion"}
	approverKeys  = []string{"user", "credential_id", "public_key"}
	assertionKeys = []string{"authenticator_data", "client_data_json", "signature", "user_handle"}
)

// Parse decodes a receipt strictly: at most [MaxSize] bytes, JSON that canon
// accepts (no duplicate keys, valid UTF-8, exact numbers), exactly the
// fields of [FormatV1] and no others, strict base64url, format FormatV1,
// a 32-byte nonce and times (Unix seconds) from 0 to the end of year 9999.
// Failures wrap [canon.ErrTooLarge], [ErrMalformed] or
// [ErrFormat]. Parse checks form only; [Verify] checks the evidence.
func Parse(data []byte) (*Receipt, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("receipt: over %d bytes: %w", MaxSize, canon.ErrTooLarge)
	}
	if _, err := (canon.Limits{MaxBytes: MaxSize, MaxDepth: maxCardDepth + 1}).Canonicalize(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	top, err := exactKeys(data, "receipt", receiptKeys)
	if err != nil {
		return nil, err
	}
	if _, err := exactKeys(top["approver"], "approver", approverKeys); err != nil {
		return nil, err
	}
	if _, err := exactKeys(top["assertion"], "assertion", assertionKeys); err != nil {
		return nil, err
	}
	var r Receipt
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrMalformed, decodeProblem(err))
	}
	if err := r.checkForm(); err != nil {
		return nil, err
	}
	return &r, nil
}

// maxTime is the latest time a receipt carries, in Unix seconds: the end
// of year 9999 (UTC), the last a time.Time writes in RFC 3339, so every
// time of a receipt [Parse] accepts encodes in a [Result]'s JSON. The
// earliest is 0.
const maxTime = 253402300799 // 9999-12-31T23:59:59Z

// checkForm checks what Parse and Verify both require of a receipt's shape.
func (r *Receipt) checkForm() error {
	switch {
	case r.Format != FormatV1:
		return fmt.Errorf("%w: format is not %s", ErrFormat, FormatV1)
	case len(r.Nonce) != 32:
		return fmt.Errorf("%w: nonce is not 32 bytes", ErrFormat)
	case r.ExpiresAt < 0 || r.ApprovedAt < 0:
		return fmt.Errorf("%w: negative time", ErrFormat)
	case r.ExpiresAt > maxTime || r.ApprovedAt > maxTime:
		return fmt.Errorf("%w: time after year 9999", ErrFormat)
	}
	return nil
}

// unixTime returns the receipt time t, or the zero time when it is out of
// the range checkForm allows (the receipt then fails the format check).
func unixTime(t int64) time.Time {
	if t < 0 || t > maxTime {
		return time.Time{}
	}
	return time.Unix(t, 0).UTC()
}

// exactKeys decodes a JSON object and checks that its keys are exactly want.
func exactKeys(raw []byte, what string, want []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrMalformed, what)
	}
	for k := range m {
		if !slices.Contains(want, k) {
			return nil, fmt.Errorf("%w: %s has an unknown field", ErrMalformed, what)
		}
	}
	if len(m) != len(want) {
		return nil, fmt.Errorf("%w: %s lacks a field", ErrMalformed, what)
	}
	return m, nil
}

// decodeProblem names the field a decode error is about without quoting
// the input.
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "wrong type for field " + te.Field
	}
	if errors.Is(err, ErrMalformed) {
		return "invalid base64url"
	}
	return "invalid receipt JSON"
}

// Marshal encodes r as compact JSON in the [FormatV1] layout. Text is
// written as is, without escaping HTML characters, so the effect and card
// read as they were signed.
func (r *Receipt) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrMalformed, decodeProblem(err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
