package stepuptest_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/stepuptest"
)

type user struct {
	id    []byte
	creds []webauthn.Credential
}

func (u *user) WebAuthnID() []byte                         { return u.id }
func (u *user) WebAuthnName() string                       { return "dana" }
func (u *user) WebAuthnDisplayName() string                { return "Dana" }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

func newRP(t *testing.T) *webauthn.WebAuthn {
	t.Helper()
	w, err := webauthn.New(&webauthn.Config{
		RPID:          "approve.example.com",
		RPDisplayName: "asu",
		RPOrigins:     []string{"https://approve.example.com"},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			UserVerification: protocol.VerificationRequired,
		},
	})
	require.NoError(t, err)
	return w
}

// register enrolls a credential of alg through go-webauthn's own
// registration ceremony.
func register(t *testing.T, rp *webauthn.WebAuthn, a *stepuptest.Authenticator, u *user, tweaks ...stepuptest.Tweak) (*webauthn.Credential, error) {
	t.Helper()
	creation, session, err := rp.BeginRegistration(u)
	require.NoError(t, err)
	opts, err := json.Marshal(creation)
	require.NoError(t, err)
	resp, err := a.Register(opts, tweaks...)
	require.NoError(t, err)
	parsed, err := protocol.ParseCredentialCreationResponseBytes(resp)
	if err != nil {
		return nil, err
	}
	return rp.CreateCredential(u, *session, parsed)
}

func login(t *testing.T, rp *webauthn.WebAuthn, a *stepuptest.Authenticator, u *user, tweaks ...stepuptest.Tweak) (*webauthn.Credential, error) {
	t.Helper()
	assertion, session, err := rp.BeginLogin(u)
	require.NoError(t, err)
	opts, err := json.Marshal(assertion)
	require.NoError(t, err)
	resp, err := a.Assert(opts, tweaks...)
	require.NoError(t, err)
	parsed, err := protocol.ParseCredentialRequestResponseBytes(resp)
	if err != nil {
		return nil, err
	}
	return rp.ValidateLogin(u, *session, parsed)
}

// TestAcceptedByGoWebAuthn runs many ceremonies per algorithm: a fake that
// drops a leading zero byte of a coordinate fails about one run in a
// hundred, so 128 fresh keys would catch it.
func TestAcceptedByGoWebAuthn(t *testing.T) {
	for _, alg := range []stepuptest.Algorithm{stepuptest.ES256, stepuptest.EdDSA} {
		rp := newRP(t)
		for i := range 128 {
			a := stepuptest.NewAuthenticator("approve.example.com", "https://approve.example.com")
			u := &user{id: []byte{byte(i), 1, 2, 3}}
			cred, err := register(t, rp, a, u, stepuptest.WithAlgorithm(alg))
			require.NoError(t, err, "alg %d run %d", alg, i)
			assert.True(t, cred.Flags.UserVerified)
			assert.Equal(t, "none", cred.AttestationFormat)
			assert.Equal(t, cred.PublicKey, a.PublicKey(cred.ID))
			u.creds = append(u.creds, *cred)
			got, err := login(t, rp, a, u)
			require.NoError(t, err, "alg %d run %d", alg, i)
			assert.Equal(t, uint32(1), got.Authenticator.SignCount)
			assert.False(t, got.Authenticator.CloneWarning)
		}
	}
}

func TestTweaksAreRefused(t *testing.T) {
	other := stepuptest.NewAuthenticator("approve.example.com", "https://approve.example.com")
	tests := []struct {
		name   string
		tweaks func() []stepuptest.Tweak
	}{
		{"wrong origin", func() []stepuptest.Tweak {
			return []stepuptest.Tweak{stepuptest.WithOrigin("https://evil.example.net")}
		}},
		{"wrong rp id", func() []stepuptest.Tweak { return []stepuptest.Tweak{stepuptest.WithRPID("evil.example.net")} }},
		{"wrong challenge", func() []stepuptest.Tweak {
			return []stepuptest.Tweak{stepuptest.WithChallenge(bytes.Repeat([]byte{7}, 32))}
		}},
		{"no user verification", func() []stepuptest.Tweak { return []stepuptest.Tweak{stepuptest.WithoutUserVerification()} }},
		{"no user presence", func() []stepuptest.Tweak { return []stepuptest.Tweak{stepuptest.WithoutUserPresence()} }},
		{"wrong ceremony type", func() []stepuptest.Tweak { return []stepuptest.Tweak{stepuptest.WithType("webauthn.create")} }},
		{"backup state without eligibility", func() []stepuptest.Tweak {
			return []stepuptest.Tweak{stepuptest.WithBackup(false, true)}
		}},
		{"unknown credential", func() []stepuptest.Tweak {
			_, err := other.Register([]byte(`{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","rp":{"id":"approve.example.com"},"user":{"id":"AQ"}}`))
			require.NoError(t, err)
			return []stepuptest.Tweak{stepuptest.WithCredential(other.CredentialIDs()[0])}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rp := newRP(t)
			a := stepuptest.NewAuthenticator("approve.example.com", "https://approve.example.com")
			u := &user{id: []byte("user-dana")}
			cred, err := register(t, rp, a, u)
			require.NoError(t, err)
			u.creds = append(u.creds, *cred)
			tweaks := tt.tweaks()
			if tt.name == "unknown credential" {
				// The fake holds only its own keys; sign with the other one.
				_, err = login(t, rp, other, u, tweaks...)
			} else {
				_, err = login(t, rp, a, u, tweaks...)
			}
			assert.Error(t, err)
			// The untweaked ceremony still passes, so the refusal came from the tweak.
			_, err = login(t, rp, a, u)
			assert.NoError(t, err)
		})
	}
}

func TestSignCountKnob(t *testing.T) {
	rp := newRP(t)
	a := stepuptest.NewAuthenticator("approve.example.com", "https://approve.example.com")
	u := &user{id: []byte("user-dana")}
	cred, err := register(t, rp, a, u, stepuptest.WithSignCount(10))
	require.NoError(t, err)
	u.creds = append(u.creds, *cred)
	got, err := login(t, rp, a, u, stepuptest.WithSignCount(10))
	require.NoError(t, err)
	assert.True(t, got.Authenticator.CloneWarning, "a counter that did not advance is a clone signal")
	got, err = login(t, rp, a, u, stepuptest.WithSignCount(11))
	require.NoError(t, err)
	assert.False(t, got.Authenticator.CloneWarning)
}

func TestBackupFlagsStick(t *testing.T) {
	rp := newRP(t)
	a := stepuptest.NewAuthenticator("approve.example.com", "https://approve.example.com")
	u := &user{id: []byte("user-dana")}
	cred, err := register(t, rp, a, u, stepuptest.WithBackup(true, true))
	require.NoError(t, err)
	assert.True(t, cred.Flags.BackupEligible)
	assert.True(t, cred.Flags.BackupState)
	u.creds = append(u.creds, *cred)
	_, err = login(t, rp, a, u)
	require.NoError(t, err)
	_, err = login(t, rp, a, u, stepuptest.WithBackup(false, false))
	assert.Error(t, err, "a BE flag that changed after registration is refused")
}
