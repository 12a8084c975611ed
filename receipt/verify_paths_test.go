package receipt_test

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// outcome returns the outcome of the check named in res.
func outcome(t *testing.T, res *receipt.Result, name receipt.CheckName) receipt.Outcome {
	t.Helper()
	require.NotNil(t, res)
	for _, c := range res.Checks {
		if c.Name == name {
			return c.Outcome
		}
	}
	t.Fatalf("no check %s", name)
	return receipt.NotRun
}

// TestVerifyEffectCheckAgreesWithCanonicalize holds the effect check's
// one-pass path for canonical input to the two-pass definition it replaces
// (canonicalize under the effect's limits, then parse as an effect:
// canon.ParseEffect): the same verdict for canonical and non-canonical
// spellings and for nesting on both sides of the limit.
func TestVerifyEffectCheckAgreesWithCanonicalize(t *testing.T) {
	s := newSigner(t, receipttest.ES256)
	r := sign(t, s)
	e := receipttest.Effect("finance@example.com")
	e.Args = json.RawMessage(`{"x":0}`)
	sealed, err := canon.Seal(e)
	require.NoError(t, err)
	base := string(sealed.Bytes())
	require.Contains(t, base, `"x":0`)

	spellings := map[string]func(string) string{
		"canonical":      func(s string) string { return s },
		"leading space":  func(s string) string { return " " + s },
		"inner space":    func(s string) string { return strings.Replace(s, `"x":`, `"x": `, 1) },
		"escaped letter": func(s string) string { return strings.Replace(s, `"x":`, `"\u0078":`, 1) },
	}
	passed, failed := 0, 0
	for name, spell := range spellings {
		for k := 0; k <= canon.DefaultMaxDepth+4; k++ {
			nested := strings.Repeat("[", k) + "0" + strings.Repeat("]", k)
			raw := []byte(spell(strings.Replace(base, `"x":0`, `"x":`+nested, 1)))
			want := receipt.Fail
			if _, err := canon.ParseEffect(raw); err == nil {
				want = receipt.Pass
			}
			c := clone(t, r)
			c.Effect = raw
			res, _ := receipt.Verify(c, s.Trusted(), s.Policy())
			got := outcome(t, res, receipt.CheckEffect)
			assert.Equal(t, want, got, "%s, nesting %d", name, k)
			if got == receipt.Pass {
				passed++
			} else {
				failed++
			}
		}
	}
	assert.Positive(t, passed)
	assert.Positive(t, failed)
}

// TestVerifyES256SignatureIsStrictDER holds the direct ES256 check to the
// encoding rules of webauthncose's: a signature re-encoded with trailing
// bytes, a long-form length or a non-minimal integer is refused by both,
// while the signature as made verifies in both.
func TestVerifyES256SignatureIsStrictDER(t *testing.T) {
	s := newSigner(t, receipttest.ES256)
	r := sign(t, s)
	parsed, err := webauthncose.ParsePublicKey(s.COSEKey())
	require.NoError(t, err)
	msg := func(r *receipt.Receipt) []byte {
		h := sha256.Sum256(r.Assertion.ClientDataJSON)
		return append(append([]byte{}, r.Assertion.AuthenticatorData...), h[:]...)
	}
	sig := []byte(r.Assertion.Signature)
	require.Equal(t, byte(0x30), sig[0])
	require.Less(t, int(sig[1]), 0x80)
	body := sig[2:]
	require.Equal(t, byte(0x02), body[0])
	rLen := int(body[1])
	rInt, rest := body[2:2+rLen], body[2+rLen:]
	der := func(rInt, rest []byte) []byte {
		inner := append(append([]byte{0x02, byte(len(rInt))}, rInt...), rest...)
		return append([]byte{0x30, byte(len(inner))}, inner...)
	}
	require.Equal(t, sig, der(rInt, rest))

	cases := map[string]struct {
		sig  []byte
		pass bool
	}{
		"as made":             {sig, true},
		"trailing byte":       {append(append([]byte{}, sig...), 0), false},
		"long-form length":    {append([]byte{0x30, 0x81, sig[1]}, body...), false},
		"non-minimal integer": {der(append([]byte{0x00}, rInt...), rest), false},
		"element after s":     {der(rInt, append(append([]byte{}, rest...), 0x05, 0x00)), false},
		"truncated":           {sig[:len(sig)-1], false},
		"empty":               {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := clone(t, r)
			c.Assertion.Signature = tc.sig
			res, _ := receipt.Verify(c, s.Trusted(), s.Policy())
			want := receipt.Fail
			if tc.pass {
				want = receipt.Pass
			}
			assert.Equal(t, want, outcome(t, res, receipt.CheckSignature))
			ok, err := webauthncose.VerifySignature(parsed, msg(c), tc.sig)
			assert.Equal(t, tc.pass, err == nil && ok, "webauthncose disagrees")
		})
	}
}
