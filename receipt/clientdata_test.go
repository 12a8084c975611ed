package receipt_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// withClientData returns r with the client data the member list members
// gives (each a `"name":value` pair, challenge written as %[1]s), signed
// by s as a browser under an attacker's control could have it signed.
func withClientData(t *testing.T, s *receipttest.Signer, r *receipt.Receipt, members ...string) *receipt.Receipt {
	t.Helper()
	c := receipt.Challenge(r.Digest, [32]byte(r.Nonce), r.ExpiresAt, r.CardHash)
	ch := fmt.Sprintf("%q", base64.RawURLEncoding.EncodeToString(c[:]))
	cd := []byte("{" + strings.ReplaceAll(strings.Join(members, ","), "%[1]s", ch) + "}")
	out := *r // not through Parse: r may be one it refuses
	sig, err := s.SignRaw(out.Assertion.AuthenticatorData, cd)
	require.NoError(t, err)
	out.Assertion.ClientDataJSON, out.Assertion.Signature = cd, sig
	return &out
}

// respellings returns names an encoding/json reader takes for name but an
// exact reader does not: another case of each letter, all upper case, and
// the letters Unicode folds into ASCII ones (ſ for s, K for k).
func respellings(name string) []string {
	var out []string
	seen := map[string]bool{name: true}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	add(strings.ToUpper(name))
	add(strings.ToLower(name))
	for i, r := range name {
		flipped := unicode.ToUpper(r)
		if flipped == r {
			flipped = unicode.ToLower(r)
		}
		add(name[:i] + string(flipped) + name[i+1:])
		switch r {
		case 's', 'S':
			add(name[:i] + "\u017f" + name[i+1:])
		case 'k', 'K':
			add(name[:i] + "\u212a" + name[i+1:])
		}
	}
	return out
}

// TestClientDataIsReadByExactNames: one signed client data means one thing
// to every reader. A member twice (whichever copy is the real one, however
// it is escaped), a member Verify reads named in another case or with a
// folded letter (beside the real one or instead of it), a duplicate deeper
// down, or a read member of the wrong type is refused as client data,
// where encoding/json would have taken the last or the folded one. Members
// WebAuthn may add are allowed.
func TestClientDataIsReadByExactNames(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	r := sign(t, s)
	real := map[string]string{"type": `"webauthn.get"`, "challenge": "%[1]s", "origin": fmt.Sprintf("%q", receipttest.Origin),
		"crossOrigin": "false"}
	fake := map[string]string{"type": `"webauthn.create"`, "challenge": `"AAAA"`, "origin": `"https://evil.example"`,
		"crossOrigin": "true"}
	names := []string{"type", "challenge", "origin", "crossOrigin"}
	// members returns the client data members with name written as given
	// (its value v), the others as they should be.
	members := func(name string, with ...string) []string {
		var out []string
		for _, n := range names {
			if n != name {
				out = append(out, fmt.Sprintf("%q:%s", n, real[n]))
			}
		}
		return append(out, with...)
	}
	refused := map[string][]string{}
	for _, n := range names {
		pair := func(key, v string) string { return fmt.Sprintf("%q:%s", key, v) }
		refused[n+" twice, the real one last"] = members(n, pair(n, fake[n]), pair(n, real[n]))
		refused[n+" twice, the real one first"] = members(n, pair(n, real[n]), pair(n, fake[n]))
		escaped := `"\u00` + fmt.Sprintf("%x", n[0]) + n[1:] + `"`
		refused[n+" twice, one escaped"] = members(n, pair(n, fake[n]), escaped+":"+real[n])
		for _, alt := range respellings(n) {
			refused[n+" and "+alt] = members(n, pair(n, fake[n]), pair(alt, real[n]))
			refused[alt+" and "+n] = members(n, pair(alt, fake[n]), pair(n, real[n]))
			refused[alt+" instead of "+n] = members(n, pair(alt, real[n]))
		}
	}
	refused["type not a string"] = members("type", `"type":["webauthn.get"]`)
	refused["challenge not a string"] = members("challenge", `"challenge":null`)
	refused["origin not a string"] = members("origin", `"origin":{"href":"x"}`)
	refused["crossOrigin not a boolean"] = members("crossOrigin", `"crossOrigin":"false"`)
	refused["crossOrigin null"] = members("crossOrigin", `"crossOrigin":null`)
	refused["duplicate inside an extension"] = members("", `"tokenBinding":{"status":"present","status":"supported"}`)
	refused["not an object"] = []string{`"type":"webauthn.get"}, {"x":1`}

	for name, m := range refused {
		t.Run(name, func(t *testing.T) {
			bad := withClientData(t, s, r, m...)
			res, err := receipt.Verify(bad, s.Trusted(), s.Policy())
			require.Error(t, err, "client data %s accepted", bad.Assertion.ClientDataJSON)
			assert.ErrorIs(t, err, receipt.ErrClientDataType, "%s", bad.Assertion.ClientDataJSON)
			assert.False(t, res.Valid)
		})
	}

	allowed := map[string][]string{
		"as a browser writes it": members(""),
		"no crossOrigin":         members("crossOrigin"),
		"members in another order": {`"origin":` + real["origin"], `"crossOrigin":false`, `"challenge":%[1]s`,
			`"type":"webauthn.get"`},
		"members WebAuthn adds": members("", `"other_keys_can_be_added_here":"do not compare clientDataJSON against a template"`,
			`"topOrigin":"https://approve.example.com"`, `"tokenBinding":{"status":"supported"}`, `"Types":1`),
		"an escaped member name": {`"\u0074ype":"webauthn.get"`, `"challenge":%[1]s`, `"origin":` + real["origin"]},
	}
	for name, m := range allowed {
		t.Run("allowed/"+name, func(t *testing.T) {
			ok := withClientData(t, s, r, m...)
			_, err := receipt.Verify(ok, s.Trusted(), s.Policy())
			assert.NoError(t, err, "%s", ok.Assertion.ClientDataJSON)
		})
	}
}
