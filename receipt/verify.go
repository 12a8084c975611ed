package receipt

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/agentstepup/asu/canon"
)

// Authenticator data layout and flag bits (WebAuthn section 6.1).
const (
	authDataMinLen = 37 // rpIdHash[32] ‖ flags[1] ‖ signCount[4]
	flagUP         = 0x01
	flagUV         = 0x04
)

// Policy is what a verifier expects of the relying party: both fields are
// required, because a passkey signature means something only for the site
// it was made for.
type Policy struct {
	// RPID is the WebAuthn relying party ID, e.g. "approve.example.com".
	RPID string
	// Origins are the web origins the approval page may be served from,
	// e.g. "https://approve.example.com".
	Origins []string
}

func (p Policy) validate() error {
	if p.RPID == "" {
		return fmt.Errorf("%w: no relying party ID", ErrPolicy)
	}
	if len(p.Origins) == 0 || slices.Contains(p.Origins, "") {
		return fmt.Errorf("%w: no origin, or an empty one", ErrPolicy)
	}
	return nil
}

// clientData is the part of WebAuthn's CollectedClientData a verifier reads.
type clientData struct {
	Type        string
	Challenge   string
	Origin      string
	CrossOrigin bool
}

// clientDataMembers are the members of the client data a verifier reads,
// exactly as WebAuthn spells them.
var clientDataMembers = []string{"type", "challenge", "origin", "crossOrigin"}

// parseClientData reads the members a verifier needs from the client data
// JSON, so that every reader of the same signed bytes sees the same values:
// JSON canon accepts (no member twice, at any level, where readers differ
// on which one counts), each member read by its exact name, and none named
// like one of them in another case or with a folded letter ("Origin",
// "croſsOrigin"), which encoding/json would take for it. Other members are
// allowed, as WebAuthn allows them. type, challenge and origin are strings;
// crossOrigin, when present, is a boolean.
func parseClientData(raw []byte) (*clientData, string) {
	v, err := canon.Parse(raw)
	if err != nil || v.Kind() != canon.KindObject {
		return nil, "client_data_json is not a JSON object canon accepts (a member twice, invalid UTF-8, ...)"
	}
	var cd clientData
	for key, m := range v.Members() {
		var text *string
		switch key {
		case "type":
			text = &cd.Type
		case "challenge":
			text = &cd.Challenge
		case "origin":
			text = &cd.Origin
		case "crossOrigin":
			if m.Kind() != canon.KindBool {
				return nil, "client data crossOrigin is not a boolean"
			}
			cd.CrossOrigin = m.Bool()
			continue
		default:
			for _, name := range clientDataMembers {
				if strings.EqualFold(key, name) {
					return nil, "client data has a member named like " + name + " in another case or with a folded letter"
				}
			}
			continue
		}
		if m.Kind() != canon.KindString {
			return nil, "client data " + key + " is not a string"
		}
		*text = m.String()
	}
	return &cd, ""
}

// Verify checks that the holder of trusted approved exactly the effect in
// r, for the relying party and origins of p. It runs every check in the
// order of [CheckNames] and returns a [Result] listing each outcome. When a
// check fails, Verify also returns the first failure as a [*CheckError]
// wrapping that check's sentinel ([ErrEffect], [ErrDigest], [ErrCardHash],
// [ErrClientDataType], [ErrChallenge], [ErrOrigin], [ErrRPID],
// [ErrUserPresence], [ErrUserVerification], [ErrKeyMismatch],
// [ErrSignature], or [ErrFormat]). Checks that depend on a failed one are
// reported as [NotRun].
//
// The client data is read as every reader of it must read it alike: a
// member named twice, or a member Verify reads (type, challenge, origin,
// crossOrigin) named in another case or with a folded letter, fails the
// client data check, since parsers differ on which of two such members
// counts. The key embedded in r (approver.public_key) is never used to
// verify; it must be the trusted key, or the receipt is refused. Expiry is reported in
// the Result, not judged. A nil receipt or key, or an incomplete policy, is
// an error wrapping [ErrPolicy] with a nil Result.
func Verify(r *Receipt, trusted *TrustedKey, p Policy) (*Result, error) {
	if r == nil || trusted == nil {
		return nil, fmt.Errorf("%w: nil receipt or key", ErrPolicy)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	v := verifier{r: r, key: trusted, p: p, res: &Result{
		Checks:     make([]Check, 0, 13),
		Digest:     r.Digest,
		CardHash:   r.CardHash,
		ExpiresAt:  unixTime(r.ExpiresAt),
		ApprovedAt: unixTime(r.ApprovedAt),
		Approver:   r.Approver.User,
		Algorithm:  trusted.Algorithm(),
	}}
	v.run()
	err := v.res.Err()
	v.res.Valid = err == nil
	return v.res, err
}

// verifier carries one run of Verify.
type verifier struct {
	r   *Receipt
	key *TrustedKey
	p   Policy
	res *Result

	formOK bool
	cd     *clientData
}

func (v *verifier) pass(name CheckName) {
	v.res.Checks = append(v.res.Checks, Check{Name: name, Outcome: Pass})
}

// fail records a failure: the sentinel, with detail when it adds to it.
func (v *verifier) fail(name CheckName, sentinel error, detail string) {
	err := sentinel
	if detail != "" {
		err = fmt.Errorf("%w: %s", sentinel, detail)
	}
	v.res.Checks = append(v.res.Checks, Check{Name: name, Outcome: Fail,
		Detail: strings.TrimPrefix(err.Error(), "receipt: "), Err: err})
}

func (v *verifier) skip(name CheckName, after CheckName) {
	v.res.Checks = append(v.res.Checks, Check{Name: name, Outcome: NotRun, Detail: "depends on " + string(after)})
}

// check records cond as a pass or as a failure with sentinel and detail,
// and returns cond.
func (v *verifier) check(name CheckName, cond bool, sentinel error, detail string) bool {
	if cond {
		v.pass(name)
	} else {
		v.fail(name, sentinel, detail)
	}
	return cond
}

func (v *verifier) run() {
	r := v.r
	if err := r.checkForm(); err != nil {
		v.fail(CheckFormat, ErrFormat, "")
	} else {
		v.formOK = true
		v.pass(CheckFormat)
	}
	v.checkEffect()
	v.checkCard()
	v.checkClientData()
	v.checkChallenge()
	v.checkOrigin()
	v.checkAuthenticatorData()
	switch {
	case !v.key.matches(r.Approver.PublicKey):
		v.fail(CheckPublicKey, ErrKeyMismatch, "approver.public_key is another key")
	case !v.key.identityMatches(r):
		v.fail(CheckPublicKey, ErrKeyMismatch, "approver user, credential ID or user handle is not the pinned identity's")
	default:
		v.pass(CheckPublicKey)
	}
	v.checkSignature()
	v.res.Checks = append(v.res.Checks, Check{Name: CheckExpiry, Outcome: Reported,
		Detail: "approval window ends at expires_at; approved_at is unsigned"})
}

// checkEffect requires the effect to be a complete [canon.Effect] whose
// canonical form is the canonical form of the JSON given (so nothing is
// missing, null where a list belongs, or unknown), and that form to hash to
// the digest.
func (v *verifier) checkEffect() {
	e, canonical, err := canonicalEffect(v.r.Effect)
	if !v.check(CheckEffect, err == nil, ErrEffect, "") {
		v.skip(CheckDigest, CheckEffect)
		return
	}
	v.res.Effect = &e
	d := canon.Sum(canonical)
	v.check(CheckDigest, d.Equal(v.r.Digest), ErrDigest, "")
}

// canonicalEffect decodes raw as a [canon.Effect] and returns it with its
// canonical form, which must be exactly what [canon.Effect.Canonical] gives
// for it: so nothing is missing, misspelt, unknown, or null where a list
// belongs. Every effect canon seals verifies: both paths judge by canon's
// own effect limits ([canon.MaxEffect] bytes, arguments as large and as
// deep as [canon.Seal] takes them), never by the default limits of
// canon.Canonicalize, which a sealed effect's envelope and nesting exceed.
func canonicalEffect(raw []byte) (canon.Effect, []byte, error) {
	// The gate writes the effect in canonical form, so parse it as such
	// first: that one pass checks it is canonical and decodes it.
	if s, err := canon.ParseSealed(raw); err == nil {
		return s.Effect(), raw, nil
	}
	e, err := canon.ParseEffect(raw)
	if err != nil {
		return canon.Effect{}, nil, err
	}
	s, err := canon.Seal(e)
	if err != nil {
		return canon.Effect{}, nil, ErrEffect
	}
	return s.Effect(), s.Bytes(), nil
}

func (v *verifier) checkCard() {
	h, err := CardHash(v.r.Card)
	v.check(CheckCardHash, err == nil && h.Equal(v.r.CardHash), ErrCardHash, "")
}

func (v *verifier) checkClientData() {
	cd, problem := parseClientData(v.r.Assertion.ClientDataJSON)
	if cd == nil {
		v.fail(CheckClientDataType, ErrClientDataType, problem)
		return
	}
	if v.check(CheckClientDataType, cd.Type == "webauthn.get", ErrClientDataType, "") {
		v.cd = cd
	}
}

// checkChallenge recomputes the challenge from the receipt's own fields.
// The digest and card hash it uses are the receipt's; the checks above tie
// them to the effect and card.
func (v *verifier) checkChallenge() {
	if v.cd == nil {
		v.skip(CheckChallenge, CheckClientDataType)
		return
	}
	if !v.formOK {
		v.skip(CheckChallenge, CheckFormat)
		return
	}
	want := Challenge(v.r.Digest, [32]byte(v.r.Nonce), v.r.ExpiresAt, v.r.CardHash)
	got, err := decodeB64([]byte(v.cd.Challenge))
	v.check(CheckChallenge, err == nil && subtle.ConstantTimeCompare(got, want[:]) == 1, ErrChallenge,
		"client data challenge is not the one recomputed from digest, nonce, expires_at and card_hash")
}

func (v *verifier) checkOrigin() {
	if v.cd == nil {
		v.skip(CheckOrigin, CheckClientDataType)
		return
	}
	switch {
	case v.cd.Origin != v.r.Origin:
		v.fail(CheckOrigin, ErrOrigin, "client data origin is not the receipt's origin")
	case !slices.Contains(v.p.Origins, v.r.Origin):
		v.fail(CheckOrigin, ErrOrigin, "origin is not one the policy allows")
	case v.cd.CrossOrigin:
		v.fail(CheckOrigin, ErrOrigin, "approval made in a cross-origin frame")
	default:
		v.pass(CheckOrigin)
	}
}

func (v *verifier) checkAuthenticatorData() {
	ad := v.r.Assertion.AuthenticatorData
	if len(ad) < authDataMinLen {
		v.fail(CheckRPID, ErrRPID, "authenticator data too short")
		v.skip(CheckUserPresent, CheckRPID)
		v.skip(CheckUserVerified, CheckRPID)
		return
	}
	rpHash := sha256.Sum256([]byte(v.p.RPID))
	switch {
	case v.r.RPID != v.p.RPID:
		v.fail(CheckRPID, ErrRPID, "rp_id is not the policy's")
	case !bytes.Equal(ad[:32], rpHash[:]):
		v.fail(CheckRPID, ErrRPID, "authenticator data is for another RP ID")
	default:
		v.pass(CheckRPID)
	}
	v.check(CheckUserPresent, ad[32]&flagUP != 0, ErrUserPresence, "")
	v.check(CheckUserVerified, ad[32]&flagUV != 0, ErrUserVerification, "")
	v.res.SignCount = binary.BigEndian.Uint32(ad[33:37])
}

func (v *verifier) checkSignature() {
	a := v.r.Assertion
	h := sha256.Sum256(a.ClientDataJSON)
	if pub, ok := v.key.pub.(*ecdsa.PublicKey); ok && v.key.alg == webauthncose.AlgES256 {
		// ES256 directly: crypto/ecdsa parses the signature as strict DER
		// (minimal integers, nothing trailing), as webauthncose does by
		// re-encoding it, without the decode, re-encode and hasher it
		// allocates.
		sh := sha256.New()
		sh.Write(a.AuthenticatorData)
		sh.Write(h[:])
		var d [sha256.Size]byte
		v.check(CheckSignature, ecdsa.VerifyASN1(pub, sh.Sum(d[:0]), a.Signature), ErrSignature, "")
		return
	}
	msg := make([]byte, 0, len(a.AuthenticatorData)+len(h))
	msg = append(append(msg, a.AuthenticatorData...), h[:]...)
	v.check(CheckSignature, v.key.verify(msg, a.Signature), ErrSignature, "")
}
