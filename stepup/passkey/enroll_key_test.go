package passkey_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// withEd25519Key rewrites an Ed25519 registration response so that its
// credential's public key is pub. Nothing signs a "none" attestation's
// authenticator data, so the response stays well formed.
func withEd25519Key(t *testing.T, resp []byte, pub []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(resp, &m))
	r := m["response"].(map[string]any)
	raw, err := base64.RawURLEncoding.DecodeString(r["attestationObject"].(string))
	require.NoError(t, err)
	var att struct {
		Fmt      string         `cbor:"fmt"`
		AttStmt  map[string]any `cbor:"attStmt"`
		AuthData []byte         `cbor:"authData"`
	}
	require.NoError(t, webauthncbor.Unmarshal(raw, &att))
	// The COSE_Key ends the authenticator data: its last member is the
	// key's 32 bytes, after their byte-string header.
	n := len(att.AuthData)
	require.Equal(t, []byte{0x58, 0x20}, att.AuthData[n-34:n-32])
	copy(att.AuthData[n-32:], pub)
	out, err := webauthncbor.Marshal(map[string]any{"fmt": att.Fmt, "attStmt": att.AttStmt, "authData": att.AuthData})
	require.NoError(t, err)
	r["attestationObject"] = base64.RawURLEncoding.EncodeToString(out)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// TestEnrollRefusesKeysNoReceiptTrusts: a passkey whose public key is an
// Ed25519 point of small order (anyone signs for it) is refused at
// enrollment, each of the eight, and the invite is not spent: the
// person's real passkey enrolls with it next.
func TestEnrollRefusesKeysNoReceiptTrusts(t *testing.T) {
	ctx := t.Context()
	for _, y := range []string{
		"0100000000000000000000000000000000000000000000000000000000000000",
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"0000000000000000000000000000000000000000000000000000000000000000",
		"0000000000000000000000000000000000000000000000000000000000000080",
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
	} {
		pub, err := hex.DecodeString(y)
		require.NoError(t, err)
		h := stepuptest.NewGate(t, nil)
		token, err := h.Enrollment.Invite(ctx, "user:erin")
		require.NoError(t, err)
		opts, err := h.Enrollment.BeginEnroll(ctx, token)
		require.NoError(t, err)
		auth := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin)
		resp, err := auth.Register(opts, stepuptest.WithAlgorithm(stepuptest.EdDSA))
		require.NoError(t, err)
		bad := withEd25519Key(t, resp, pub)
		require.False(t, bytes.Equal(bad, resp))
		_, err = h.Enrollment.FinishEnroll(ctx, token, bad)
		assert.ErrorIs(t, err, stepup.ErrBadAssertion, "%s", y)
		_, err = h.Enrollment.FinishEnroll(ctx, token, resp)
		assert.NoError(t, err, "the invite was spent by a refused passkey")
	}
}
