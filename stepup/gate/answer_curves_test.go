package gate_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ecAuth is a counterless ECDSA authenticator on any curve enrolment
// accepts (ES256, ES384, ES512), as synced passkeys are counterless.
type ecAuth struct {
	alg   int
	crv   int
	curve elliptic.Curve
	hash  crypto.Hash
	id    []byte
	key   *ecdsa.PrivateKey
	uh    []byte
}

func (p *ecAuth) register(t *testing.T, options []byte) []byte {
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			User      struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
		Challenge string `json:"challenge"`
		User      struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	require.NoError(t, json.Unmarshal(options, &o))
	ch, uid := o.PublicKey.Challenge, o.PublicKey.User.ID
	if ch == "" {
		ch, uid = o.Challenge, o.User.ID
	}
	challenge := unb64(t, ch)
	p.uh = unb64(t, uid)
	p.id = make([]byte, 32)
	_, _ = rand.Read(p.id)
	var err error
	p.key, err = ecdsa.GenerateKey(p.curve, rand.Reader)
	require.NoError(t, err)
	pub, err := p.key.PublicKey.Bytes()
	require.NoError(t, err)
	size := (len(pub) - 1) / 2
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: p.alg, -1: p.crv, -2: pub[1 : 1+size], -3: pub[1+size:]})
	require.NoError(t, err)
	ad := ecAuthData(0x45)
	ad = append(ad, make([]byte, 16)...)
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(p.id)))
	ad = append(append(ad, p.id...), cose...)
	att, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	require.NoError(t, err)
	out, err := json.Marshal(map[string]any{"id": b64(p.id), "rawId": b64(p.id), "type": "public-key",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64(ecClientData(t, "webauthn.create", challenge)),
			"attestationObject": b64(att), "transports": []string{"usb"}}})
	require.NoError(t, err)
	return out
}

// assert signs the request options' challenge and returns the answer and
// its signature's integers.
func (p *ecAuth) assert(t *testing.T, options []byte) (answer []byte, ad, cd []byte, r, s *big.Int) {
	var o struct {
		Challenge string `json:"challenge"`
	}
	require.NoError(t, json.Unmarshal(options, &o))
	ad, cd = ecAuthData(0x05), ecClientData(t, "webauthn.get", unb64(t, o.Challenge))
	h := sha256.Sum256(cd)
	d := p.hash.New()
	d.Write(ad)
	d.Write(h[:])
	sig, err := ecdsa.SignASN1(rand.Reader, p.key, d.Sum(nil))
	require.NoError(t, err)
	var rs struct{ R, S *big.Int }
	_, err = asn1.Unmarshal(sig, &rs)
	require.NoError(t, err)
	return p.answer(t, ad, cd, rs.R, rs.S), ad, cd, rs.R, rs.S
}

func (p *ecAuth) answer(t *testing.T, ad, cd []byte, r, s *big.Int) []byte {
	sig, err := asn1.Marshal(struct{ R, S *big.Int }{r, s})
	require.NoError(t, err)
	out, err := json.Marshal(map[string]any{"id": b64(p.id), "rawId": b64(p.id), "type": "public-key",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64(cd), "authenticatorData": b64(ad), "signature": b64(sig),
			"userHandle": b64(p.uh)}})
	require.NoError(t, err)
	return out
}

func ecAuthData(flags byte) []byte {
	h := sha256.Sum256([]byte(stepuptest.RP().ID))
	return binary.BigEndian.AppendUint32(append(h[:], flags), 0)
}

func ecClientData(t *testing.T, typ string, challenge []byte) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": b64(challenge), "origin": stepuptest.RP().Origin,
		"crossOrigin": false})
	require.NoError(t, err)
	return b
}

func unb64(t *testing.T, s string) []byte {
	out, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	return out
}

// TestTooSoonAnswerNeverCountsOnAnyCurve: on every ECDSA curve enrolment
// accepts, an answer refused as too soon is refused again after the
// dwell in every spelling that verifies ((r, s) and (r, n-s), whichever
// is low), while a new signature over the same challenge approves and
// the call runs, its receipt rechecked offline on that curve.
func TestTooSoonAnswerNeverCountsOnAnyCurve(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		alg, crv int
		curve    elliptic.Curve
		hash     crypto.Hash
	}{
		{"ES256", -7, 1, elliptic.P256(), crypto.SHA256},
		{"ES384", -35, 2, elliptic.P384(), crypto.SHA384},
		{"ES512", -36, 3, elliptic.P521(), crypto.SHA512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, gate.WithDwell(gate.DefaultDwell))
			p := &ecAuth{alg: tc.alg, crv: tc.crv, curve: tc.curve, hash: tc.hash}
			token, err := w.Enrollment.Invite(ctx, "user:erin")
			require.NoError(t, err)
			opts, err := w.Enrollment.BeginEnroll(ctx, token)
			require.NoError(t, err)
			_, err = w.Enrollment.FinishEnroll(ctx, token, p.register(t, opts))
			require.NoError(t, err, "enrolment accepts %s", tc.name)

			call := sendEmail("finance@example.com")
			call.Principal = agentFor("user:erin")
			tk, err := w.Gate.Propose(ctx, call)
			require.NoError(t, err)
			pr, err := w.Gate.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID))
			answer, ad, cd, r, s := p.assert(t, pr.Options)
			_, err = w.Gate.Desk().Approve(ctx, tk.ID, answer)
			require.ErrorIs(t, err, stepup.ErrTooFast)

			w.Clock.Advance(gate.DefaultDwell)
			n := tc.curve.Params().N
			for name, spelling := range map[string][]byte{
				"the same": answer,
				"(r, n-s)": p.answer(t, ad, cd, r, new(big.Int).Sub(n, s)),
				"low s":    p.answer(t, ad, cd, r, minS(s, n)),
				"high s":   p.answer(t, ad, cd, r, new(big.Int).Sub(n, minS(s, n))),
			} {
				got, err := w.Gate.Desk().Approve(ctx, tk.ID, spelling)
				assert.ErrorIs(t, err, stepup.ErrTooFast, "%s: the too-soon answer counted", name)
				assert.NotEqual(t, stepup.StatusApproved, got.Status)
			}
			again, _, _, _, _ := p.assert(t, pr.Options)
			got, err := w.Gate.Desk().Approve(ctx, tk.ID, again)
			require.NoError(t, err, "signed again, it counts")
			assert.Equal(t, stepup.StatusApproved, got.Status)
			_, err = w.Gate.Execute(ctx, tk.ID)
			require.NoError(t, err, "the approval is rechecked offline and the call runs")
		})
	}
}

func minS(s, n *big.Int) *big.Int {
	if other := new(big.Int).Sub(n, s); other.Cmp(s) < 0 {
		return other
	}
	return new(big.Int).Set(s)
}

// TestTooSoonTellsADeterministicSignerWhatToDo: an Ed25519 passkey
// without a counter signs the same challenge to the same bytes, so after
// an answer too soon it cannot approve the ticket; the refusal says so
// and what to do, and another approver still can.
func TestTooSoonTellsADeterministicSignerWhatToDo(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithDwell(gate.DefaultDwell))
	ed := w.Enroll(t, "user:erin", stepuptest.WithAlgorithm(stepuptest.EdDSA), stepuptest.WithSignCount(0))
	call := sendEmail("finance@example.com")
	call.Principal = agentFor("user:erin")
	tk, err := w.Gate.Propose(ctx, call)
	require.NoError(t, err)
	p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
	require.NoError(t, err)
	require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID))
	sign := func() []byte {
		a, err := ed.Assert(p.Options, stepuptest.WithSignCount(0))
		require.NoError(t, err)
		return a
	}
	_, err = w.Gate.Desk().Approve(ctx, tk.ID, sign())
	require.ErrorIs(t, err, stepup.ErrTooFast)
	assert.Contains(t, err.Error(), "cannot approve this ticket any more")
	w.Clock.Advance(gate.DefaultDwell)
	_, err = w.Gate.Desk().Approve(ctx, tk.ID, sign())
	require.ErrorIs(t, err, stepup.ErrTooFast, "the limitation: the same bytes again")
	for _, want := range []string{"same answer every time", "ask another approver", "proposed again"} {
		assert.Contains(t, err.Error(), want)
	}
}
