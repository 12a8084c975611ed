package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestHashedRuntimeTokens: a gateway configured with only a token's
// SHA-256 admits the token and nothing else; the hash itself, or a token
// that differs anywhere, is refused; giving both a token and a hash is a
// configuration error.
func TestHashedRuntimeTokens(t *testing.T) {
	g, _ := newGate()
	token, err := gateway.NewRuntimeToken()
	require.NoError(t, err)
	h := gateway.HashRuntimeToken(token)
	api, err := gateway.NewAgentAPI(g, []gateway.RuntimeToken{{SHA256: h, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`), Session: "s",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}

	c, err := remote.NewClient(srv.URL, token, nil)
	require.NoError(t, err)
	_, err = c.Propose(context.Background(), call)
	require.NoError(t, err)

	wrong := []string{hex.EncodeToString(h[:]), base64.RawURLEncoding.EncodeToString(h[:]), token[:len(token)-1], token + "x"}
	for i := range token {
		b := []byte(token)
		b[i] ^= 1
		wrong = append(wrong, string(b))
	}
	for _, w := range wrong {
		c, err := remote.NewClient(srv.URL, w, nil)
		if err != nil {
			continue
		}
		_, err = c.Propose(context.Background(), call)
		assert.ErrorIs(t, err, remote.ErrUnauthorized)
	}

	_, err = gateway.NewAgentAPI(g, []gateway.RuntimeToken{{Token: token, SHA256: h, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	assert.ErrorIs(t, err, stepup.ErrConfig)
	_, err = gateway.NewAgentAPI(g, []gateway.RuntimeToken{
		{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}},
		{SHA256: h, Agent: "agent:billing", Users: []string{"user:dana"}}}, nil)
	assert.ErrorIs(t, err, stepup.ErrConfig, "one token, two runtimes")
}

// TestDeniedIDsSayWhy: a call denied at propose has an id, but no stored
// ticket: waiting on it or executing it answers not_found with a message
// that says denials are final and not stored, and nothing runs.
func TestDeniedIDsSayWhy(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	denied := []stepup.Call{
		{Tool: "delete_everything", Args: json.RawMessage(`{}`), Session: "s", Principal: sendEmail("").Principal},
		{Tool: "issue_refund", Args: json.RawMessage(`{"order":"o-1","amount":5000}`), Session: "s", Principal: sendEmail("").Principal},
		{Tool: "send_email", Args: json.RawMessage(`[1]`), Session: "s", Principal: sendEmail("").Principal},
	}
	for _, c := range denied {
		tk, err := r.client.Propose(ctx, c)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusDenied, tk.Status, c.Tool)
		require.NotEmpty(t, tk.ID)
		_, err = r.client.Wait(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrNotFound)
		assert.ErrorContains(t, err, "denial at propose is final and is not stored")
		_, err = r.client.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrNotFound)
		assert.ErrorContains(t, err, "denial at propose is final and is not stored")
	}
	assert.Zero(t, r.exec.count())
}

// TestRuntimeTokensNameWellFormedPrincipals: a runtime token's agent and
// users are refused at configuration unless they are principal ids of the
// one syntax the gate accepts, so a look-alike or mis-cased name is a
// start-up error rather than a gateway that denies every call.
func TestRuntimeTokensNameWellFormedPrincipals(t *testing.T) {
	g := stepuptest.NewGate(t, nil).Gate
	token := strings.Repeat("t", 48)
	ok := gateway.RuntimeToken{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}
	_, err := gateway.NewAgentAPI(g, []gateway.RuntimeToken{ok}, nil)
	require.NoError(t, err)
	for _, agent := range []string{"Agent:reports", "agent:Reports", "\u0430gent:reports", "agent:rep\u043erts", "agent:",
		"agent:reports ", "agent:re ports", "user:dana", "grant:x", "agent:reports\u200b"} {
		bad := ok
		bad.Agent = agent
		_, err := gateway.NewAgentAPI(g, []gateway.RuntimeToken{bad}, nil)
		assert.ErrorIs(t, err, stepup.ErrConfig, "agent %q", agent)
	}
	for _, user := range []string{"", "User:dana", "user:Dana", "\u0443ser:dana", "user:d\u0430na", "agent:reports",
		"group:finance", "policy:v1", "dana", "user:dana\u00a0"} {
		bad := ok
		bad.Users = []string{user}
		_, err := gateway.NewAgentAPI(g, []gateway.RuntimeToken{bad}, nil)
		assert.ErrorIs(t, err, stepup.ErrConfig, "user %q", user)
	}
}
