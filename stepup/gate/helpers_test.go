package gate_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// swapChallenge signs an assertion for ticket from, then rewrites the
// challenge in its client data to that of ticket to, keeping the signature:
// the evidence now names the other action, and the signature no longer
// covers it.
func swapChallenge(t *testing.T, w *world, from, to stepup.TicketID) []byte {
	t.Helper()
	ctx := context.Background()
	pFrom, err := w.Gate.Desk().Prompt(ctx, from)
	require.NoError(t, err)
	pTo, err := w.Gate.Desk().Prompt(ctx, to)
	require.NoError(t, err)
	assertion, err := w.Authenticator.Assert(pFrom.Options)
	require.NoError(t, err)
	var msg map[string]any
	require.NoError(t, json.Unmarshal(assertion, &msg))
	resp := msg["response"].(map[string]any)
	cd, err := base64.RawURLEncoding.DecodeString(resp["clientDataJSON"].(string))
	require.NoError(t, err)
	var client map[string]any
	require.NoError(t, json.Unmarshal(cd, &client))
	client["challenge"] = base64.RawURLEncoding.EncodeToString(pTo.Challenge[:])
	cd, err = json.Marshal(client)
	require.NoError(t, err)
	resp["clientDataJSON"] = base64.RawURLEncoding.EncodeToString(cd)
	out, err := json.Marshal(msg)
	require.NoError(t, err)
	return out
}

// plantCredential puts a credential for user straight into the store,
// bypassing enrollment, as a misconfiguration or a compromised admin
// might, and returns the authenticator holding it.
func plantCredential(t *testing.T, w *world, user string) *stepuptest.Authenticator {
	t.Helper()
	a := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin)
	// The gate's user handle for user: SHA-256("asu/v1/user" ‖ 0x00 ‖ user).
	h := sha256.Sum256([]byte("asu/v1/user\x00" + user))
	_, err := a.Register([]byte(`{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","rp":{"id":"approve.example.com"},"user":{"id":"` +
		base64.RawURLEncoding.EncodeToString(h[:]) + `"}}`))
	require.NoError(t, err)
	id := a.CredentialIDs()[0]
	require.NoError(t, w.Store.PutCredential(context.Background(), store.Credential{
		ID: id, User: user, PublicKey: a.PublicKey(id), CreatedAt: stepuptest.Start()}))
	return a
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func agentFor(user string) canon.Principal {
	return canon.Principal{User: user, Agent: "agent:reports"}
}

func writeFile(dir, name, content string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)
}

func stepupCaps(perSession int) store.Caps { return store.Caps{PerSession: perSession} }

// requireRefusal fails unless err is nil (a refusal is a denied ticket)
// or, for a call over a size limit, wraps stepup.ErrTooLarge (the denied
// ticket comes with it).
func requireRefusal(t testing.TB, err error, msgAndArgs ...any) {
	t.Helper()
	if !errors.Is(err, stepup.ErrTooLarge) {
		require.NoError(t, err, msgAndArgs...)
	}
}
