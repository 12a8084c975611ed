package receipt_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// clone deep-copies a receipt through its JSON form.
func clone(t testing.TB, r *receipt.Receipt) *receipt.Receipt {
	t.Helper()
	b, err := r.Marshal()
	require.NoError(t, err)
	c, err := receipt.Parse(b)
	require.NoError(t, err)
	return c
}

// failedCheck verifies r and returns the first failing check, or "" when r
// verifies.
func failedCheck(t testing.TB, r *receipt.Receipt, k *receipt.TrustedKey, p receipt.Policy) receipt.CheckName {
	t.Helper()
	res, err := receipt.Verify(r, k, p)
	require.NotNil(t, res)
	if err == nil {
		assert.True(t, res.Valid)
		return ""
	}
	assert.False(t, res.Valid)
	var ce *receipt.CheckError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), string(ce.Check), "the reason names the failing check")
	return ce.Check
}

// pinned returns the signer's trusted key with the receipt's identity
// pinned, as an auditor holding the enrollment record would.
func pinned(s *receipttest.Signer, r *receipt.Receipt) *receipt.TrustedKey {
	return s.Trusted().WithIdentity(receipt.Identity{
		User: r.Approver.User, CredentialID: r.Approver.CredentialID, UserHandle: r.Assertion.UserHandle,
	})
}

// field is one field of a receipt: a way to flip its i-th byte, and the
// checks allowed to refuse the flip.
type field struct {
	name   string
	flip   func(r *receipt.Receipt, i int) bool // false when i is past the end
	checks []receipt.CheckName
}

func flipBytes(b []byte, i int) bool {
	if i >= len(b) {
		return false
	}
	b[i] ^= 0x01
	return true
}

func flipString(s *string, i int) bool {
	b := []byte(*s)
	if !flipBytes(b, i) {
		return false
	}
	*s = string(b)
	return true
}

func flipInt(v *int64, i int) bool {
	if i >= 8 {
		return false
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(*v))
	b[i] ^= 0x01
	*v = int64(binary.BigEndian.Uint64(b[:]))
	return true
}

func receiptFields() []field {
	C := func(names ...receipt.CheckName) []receipt.CheckName { return names }
	return []field{
		{"format", func(r *receipt.Receipt, i int) bool { return flipString(&r.Format, i) }, C(receipt.CheckFormat)},
		{"effect", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Effect, i) }, C(receipt.CheckEffect, receipt.CheckDigest)},
		{"digest", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Digest[:], i) }, C(receipt.CheckDigest)},
		{"card", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Card, i) }, C(receipt.CheckCardHash)},
		{"card_hash", func(r *receipt.Receipt, i int) bool { return flipBytes(r.CardHash[:], i) }, C(receipt.CheckCardHash)},
		{"nonce", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Nonce, i) }, C(receipt.CheckChallenge)},
		// A flip in a high byte puts the time past year 9999: the format refuses it.
		{"expires_at", func(r *receipt.Receipt, i int) bool { return flipInt(&r.ExpiresAt, i) }, C(receipt.CheckChallenge, receipt.CheckFormat)},
		{"approver.user", func(r *receipt.Receipt, i int) bool { return flipString(&r.Approver.User, i) }, C(receipt.CheckPublicKey)},
		{"approver.credential_id", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Approver.CredentialID, i) }, C(receipt.CheckPublicKey)},
		{"approver.public_key", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Approver.PublicKey, i) }, C(receipt.CheckPublicKey)},
		{"rp_id", func(r *receipt.Receipt, i int) bool { return flipString(&r.RPID, i) }, C(receipt.CheckRPID)},
		{"origin", func(r *receipt.Receipt, i int) bool { return flipString(&r.Origin, i) }, C(receipt.CheckOrigin)},
		{"assertion.authenticator_data", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Assertion.AuthenticatorData, i) },
			C(receipt.CheckRPID, receipt.CheckUserPresent, receipt.CheckSignature)},
		{"assertion.client_data_json", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Assertion.ClientDataJSON, i) },
			C(receipt.CheckClientDataType, receipt.CheckChallenge, receipt.CheckOrigin, receipt.CheckSignature)},
		{"assertion.signature", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Assertion.Signature, i) }, C(receipt.CheckSignature)},
		{"assertion.user_handle", func(r *receipt.Receipt, i int) bool { return flipBytes(r.Assertion.UserHandle, i) }, C(receipt.CheckPublicKey)},
	}
}

// TestTamperEveryByteOfEveryField flips each byte of each field of a valid
// receipt, one at a time, and requires each flip to be refused by a check
// that names the field's meaning. approved_at is the one field nothing
// signs; TestApprovedAtIsReportedNotProven covers it.
func TestTamperEveryByteOfEveryField(t *testing.T) {
	for _, alg := range receipttest.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s := newSigner(t, alg)
			orig := sign(t, s)
			key, p := pinned(s, orig), s.Policy()
			require.Empty(t, failedCheck(t, orig, key, p))
			for _, f := range receiptFields() {
				flips := 0
				for i := 0; ; i++ {
					r := clone(t, orig)
					if !f.flip(r, i) {
						break
					}
					flips++
					got := failedCheck(t, r, key, p)
					if !assert.Truef(t, slices.Contains(f.checks, got), "%s byte %d: refused by %q, want one of %v", f.name, i, got, f.checks) {
						return
					}
				}
				assert.Positive(t, flips, f.name)
			}
		})
	}
}

// TestTamperEveryByteOfTheDocument flips each byte of the encoded receipt:
// each flip is refused by Parse or Verify, or leaves everything the receipt
// proves unchanged (a flip inside approved_at, or a case change of hex).
func TestTamperEveryByteOfTheDocument(t *testing.T) {
	s := newSigner(t, receipttest.ES256)
	orig := sign(t, s)
	key, p := pinned(s, orig), s.Policy()
	doc, err := orig.Marshal()
	require.NoError(t, err)
	want := evidence(t, orig)
	accepted := 0
	for i := range doc {
		m := bytes.Clone(doc)
		m[i] ^= 0x01
		r, err := receipt.Parse(m)
		if err != nil {
			continue
		}
		if _, err := receipt.Verify(r, key, p); err != nil {
			continue
		}
		accepted++
		assert.Equalf(t, want, evidence(t, r), "byte %d: a mutation verified with different evidence", i)
	}
	t.Logf("%d of %d flips verified, all with unchanged evidence", accepted, len(doc))
	assert.Less(t, accepted, 20, "only unsigned or equivalent spellings survive")
}

// evidence is everything a valid receipt proves, in canonical form.
func evidence(t testing.TB, r *receipt.Receipt) [][]byte {
	t.Helper()
	eff, err := canon.Canonicalize(r.Effect)
	require.NoError(t, err)
	card, err := canon.Canonicalize(r.Card)
	require.NoError(t, err)
	return [][]byte{eff, r.Digest[:], card, r.CardHash[:], r.Nonce, binary.BigEndian.AppendUint64(nil, uint64(r.ExpiresAt)),
		[]byte(r.RPID), []byte(r.Origin), r.Assertion.AuthenticatorData, r.Assertion.ClientDataJSON,
		r.Approver.PublicKey, []byte(r.Approver.User), r.Approver.CredentialID, r.Assertion.UserHandle}
}

func TestApprovedAtIsReportedNotProven(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	r := sign(t, s)
	r.ApprovedAt += 3600
	res, err := receipt.Verify(r, pinned(s, r), s.Policy())
	require.NoError(t, err, "nothing signs approved_at")
	assert.Equal(t, approvedAt.Add(3600e9).UTC(), res.ApprovedAt)
	c, ok := res.Check(receipt.CheckExpiry)
	require.True(t, ok)
	assert.Equal(t, receipt.Reported, c.Outcome)
	assert.Contains(t, c.Detail, "unsigned")
}

func TestIdentityIsBoundOnlyWhenPinned(t *testing.T) {
	s := newSigner(t, receipttest.ES256)
	r := sign(t, s)
	r.Approver.User = "user:mallory"
	assert.Empty(t, failedCheck(t, r, s.Trusted(), s.Policy()), "an unpinned key cannot know the user")
	assert.Equal(t, receipt.CheckPublicKey, failedCheck(t, r, s.Trusted().WithIdentity(receipt.Identity{User: "user:dana"}), s.Policy()))
}

// TestSwapEffect replaces the effect by another one with its own correct
// digest: the signature still verifies over the old challenge, so only the
// recomputed challenge catches it, as a naive verifier shows.
func TestSwapEffect(t *testing.T) {
	s := newSigner(t, receipttest.ES256)
	r := sign(t, s)
	other := receipttest.Effect("finance@exarnple.com")
	c, err := other.Canonical()
	require.NoError(t, err)
	r.Effect, r.Digest = c, canon.Sum(c)

	assert.Equal(t, receipt.CheckChallenge, failedCheck(t, r, s.Trusted(), s.Policy()))
	assert.True(t, naiveVerify(r, s.Trusted()), "a verifier that only checks the signature accepts the swap")
}

// TestReuseWithDifferentCard moves an approval to another card.
func TestReuseWithDifferentCard(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	r := sign(t, s)
	card := []byte(`{"title":"Send an email","fields":[],"untrusted":"looks routine"}`)

	onlyCard := clone(t, r)
	onlyCard.Card = card
	assert.Equal(t, receipt.CheckCardHash, failedCheck(t, onlyCard, s.Trusted(), s.Policy()))

	consistent := clone(t, r)
	consistent.Card = card
	consistent.CardHash, _ = receipt.CardHash(card)
	assert.Equal(t, receipt.CheckChallenge, failedCheck(t, consistent, s.Trusted(), s.Policy()))
	assert.True(t, naiveVerify(consistent, s.Trusted()))
}

// TestSwapKey: a receipt made by another key, embedding that key, is
// refused against the trusted key; a naive verifier that uses the embedded
// key accepts it.
func TestSwapKey(t *testing.T) {
	alice, mallory := newSigner(t, receipttest.ES256), newSigner(t, receipttest.ES256)
	forged := sign(t, mallory)

	res, err := receipt.Verify(forged, alice.Trusted(), alice.Policy())
	require.ErrorIs(t, err, receipt.ErrKeyMismatch)
	c, _ := res.Check(receipt.CheckSignature)
	assert.Equal(t, receipt.Fail, c.Outcome)
	assert.ErrorIs(t, c.Err, receipt.ErrSignature)

	embedded, err := receipt.ParseCOSEKey(forged.Approver.PublicKey)
	require.NoError(t, err)
	assert.True(t, naiveVerify(forged, embedded), "trusting the embedded key accepts a forgery")

	// Alice's key embedded in Mallory's receipt: the signature check refuses.
	forged.Approver.PublicKey = alice.COSEKey()
	assert.Equal(t, receipt.CheckSignature, failedCheck(t, forged, alice.Trusted(), alice.Policy()))
}

// naiveVerify checks only the signature, as a verifier that skipped the
// receipt's bindings would.
func naiveVerify(r *receipt.Receipt, k *receipt.TrustedKey) bool {
	res, err := receipt.Verify(r, k, receipt.Policy{RPID: r.RPID, Origins: []string{r.Origin}})
	if err == nil {
		return true
	}
	c, _ := res.Check(receipt.CheckSignature)
	return c.Outcome == receipt.Pass
}

// TestVerifyRefusesBentCeremonies signs correctly but with one aspect of
// the WebAuthn ceremony wrong; each is refused by its own check.
func TestVerifyRefusesBentCeremonies(t *testing.T) {
	wrong := sha256.Sum256([]byte("another challenge"))
	tests := []struct {
		name     string
		tweak    receipttest.Tweak
		check    receipt.CheckName
		sentinel error
	}{
		{"registration type", receipttest.WithType("webauthn.create"), receipt.CheckClientDataType, receipt.ErrClientDataType},
		{"other challenge", receipttest.WithChallenge(wrong[:]), receipt.CheckChallenge, receipt.ErrChallenge},
		{"short challenge", receipttest.WithChallenge(wrong[:31]), receipt.CheckChallenge, receipt.ErrChallenge},
		{"other origin", receipttest.WithOrigin("https://approve.example.com.evil.test"), receipt.CheckOrigin, receipt.ErrOrigin},
		{"cross origin", receipttest.WithCrossOrigin(), receipt.CheckOrigin, receipt.ErrOrigin},
		{"other RP ID", receipttest.WithRPID("example.com"), receipt.CheckRPID, receipt.ErrRPID},
		{"no user presence", receipttest.WithFlags(0x04), receipt.CheckUserPresent, receipt.ErrUserPresence},
		{"no user verification", receipttest.WithFlags(0x01), receipt.CheckUserVerified, receipt.ErrUserVerification},
	}
	s := newSigner(t, receipttest.ES256)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sign(t, s, tt.tweak)
			res, err := receipt.Verify(r, s.Trusted(), s.Policy())
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.sentinel)
			var ce *receipt.CheckError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.check, ce.Check)
			sig, _ := res.Check(receipt.CheckSignature)
			assert.Equal(t, receipt.Pass, sig.Outcome, "the signature itself is genuine")
		})
	}
}

func TestVerifyPolicy(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	r := sign(t, s)
	tests := []struct {
		name  string
		p     receipt.Policy
		err   error
		check receipt.CheckName
	}{
		{"no RP ID", receipt.Policy{Origins: []string{receipttest.Origin}}, receipt.ErrPolicy, ""},
		{"no origin", receipt.Policy{RPID: receipttest.RPID}, receipt.ErrPolicy, ""},
		{"empty origin", receipt.Policy{RPID: receipttest.RPID, Origins: []string{""}}, receipt.ErrPolicy, ""},
		{"other RP", receipt.Policy{RPID: "example.org", Origins: []string{receipttest.Origin}}, receipt.ErrRPID, receipt.CheckRPID},
		{"other origin", receipt.Policy{RPID: receipttest.RPID, Origins: []string{"https://example.org"}}, receipt.ErrOrigin, receipt.CheckOrigin},
		{"one of several", receipt.Policy{RPID: receipttest.RPID, Origins: []string{"https://example.org", receipttest.Origin}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := receipt.Verify(r, s.Trusted(), tt.p)
			if tt.err == nil {
				require.NoError(t, err)
				assert.True(t, res.Valid)
				return
			}
			assert.ErrorIs(t, err, tt.err)
			if tt.check == "" {
				assert.Nil(t, res)
			} else {
				assert.Equal(t, tt.check, failedCheck(t, r, s.Trusted(), tt.p))
			}
		})
	}
	_, err := receipt.Verify(nil, s.Trusted(), s.Policy())
	assert.ErrorIs(t, err, receipt.ErrPolicy)
	_, err = receipt.Verify(r, nil, s.Policy())
	assert.ErrorIs(t, err, receipt.ErrPolicy)
}

func TestVerifyReportsDependentChecksNotRun(t *testing.T) {
	s := newSigner(t, receipttest.ES256)
	r := sign(t, s)
	r.Effect = []byte(`{"tool":"send_email"}`)
	r.Assertion.ClientDataJSON = []byte(`not json`)
	res, err := receipt.Verify(r, s.Trusted(), s.Policy())
	require.ErrorIs(t, err, receipt.ErrEffect)
	want := map[receipt.CheckName]receipt.Outcome{
		receipt.CheckEffect: receipt.Fail, receipt.CheckDigest: receipt.NotRun,
		receipt.CheckClientDataType: receipt.Fail, receipt.CheckChallenge: receipt.NotRun,
		receipt.CheckOrigin: receipt.NotRun, receipt.CheckCardHash: receipt.Pass,
		receipt.CheckSignature: receipt.Fail,
	}
	for name, outcome := range want {
		c, ok := res.Check(name)
		require.True(t, ok)
		assert.Equal(t, outcome, c.Outcome, name)
	}
	assert.Nil(t, res.Effect)
}

func TestEffectMustBeCanonicalEffect(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	tests := []struct {
		name   string
		effect string
	}{
		{"missing field", `{"tool":"send_email","args":{},"refs":[],"task":"","step":"","principal":{"user":"","agent":"","delegations":[]},"policy_version":""}`},
		{"null list", `{"tool":"send_email","args":{},"refs":null,"task":"","step":"","principal":{"user":"","agent":"","delegations":[]},"policy_version":"","audience":""}`},
		{"unknown field", `{"tool":"send_email","args":{},"refs":[],"task":"","step":"","principal":{"user":"","agent":"","delegations":[]},"policy_version":"","audience":"","x":1}`},
		{"args not object", `{"tool":"send_email","args":[],"refs":[],"task":"","step":"","principal":{"user":"","agent":"","delegations":[]},"policy_version":"","audience":""}`},
		{"inexact number", `{"tool":"send_email","args":{"n":0.30000000000000001},"refs":[],"task":"","step":"","principal":{"user":"","agent":"","delegations":[]},"policy_version":"","audience":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sign(t, s)
			r.Effect = []byte(tt.effect)
			r.Digest = canon.Sum(r.Effect) // a forger would match the digest
			_, err := receipt.Verify(r, s.Trusted(), s.Policy())
			assert.ErrorIs(t, err, receipt.ErrEffect)
		})
	}
	// Whitespace and key order are not meaningful: the canonical form is.
	r := sign(t, s)
	var pretty bytes.Buffer
	pretty.WriteString("{\n  ")
	pretty.Write(r.Effect[1:])
	r.Effect = pretty.Bytes()
	_, err := receipt.Verify(r, s.Trusted(), s.Policy())
	assert.NoError(t, err)
}

func TestCheckErrorUnwrapsToSentinel(t *testing.T) {
	e := &receipt.CheckError{Check: receipt.CheckSignature, Err: receipt.ErrSignature}
	assert.True(t, errors.Is(e, receipt.ErrSignature))
	assert.Equal(t, "receipt: signature check failed: signature does not verify with the trusted key", e.Error())
}
