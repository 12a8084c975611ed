package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestRuntimeTokensStayInTheirLane: over HTTP, a runtime token proposes
// only as its own agent for its own users, in any spelling of another
// agent or user, and waits on, cancels and executes only its own tickets;
// a token in another spelling authenticates nothing. The control: the
// token's own calls work, so every refusal below could have been an
// acceptance.
func TestRuntimeTokensStayInTheirLane(t *testing.T) {
	ctx := context.Background()
	cat, err := policy.NewCatalog("lane-1", policy.Tool{Name: "read", Title: "Read", Class: card.ClassRead},
		policy.Tool{Name: "mail", Title: "Mail", Class: card.ClassExternal})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat, gate.WithExecutor("read", &stepuptest.Recorder{}),
		gate.WithExecutor("mail", &stepuptest.Recorder{}))
	tokA, err := gateway.NewRuntimeToken()
	require.NoError(t, err)
	tokB, err := gateway.NewRuntimeToken()
	require.NoError(t, err)
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
		{Token: tokA, Agent: "agent:reports", Users: []string{"user:dana"}},
		{Token: tokB, Agent: "agent:billing", Users: []string{"user:erin"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	a, err := remote.NewClient(srv.URL, tokA, srv.Client())
	require.NoError(t, err)
	b, err := remote.NewClient(srv.URL, tokB, srv.Client())
	require.NoError(t, err)

	call := func(tool, user, agent string, n int) stepup.Call {
		return stepup.Call{Tool: tool, Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), Session: "s",
			Step: fmt.Sprint(n), Principal: canon.Principal{User: user, Agent: agent}}
	}
	// Control: A's own calls.
	own, err := a.Propose(ctx, call("read", "user:dana", "agent:reports", 0))
	require.NoError(t, err)
	require.True(t, own.Status.Runnable())
	pending, err := a.Propose(ctx, call("mail", "user:dana", "agent:reports", 1))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, pending.Status)

	n := 2
	for _, agent := range []string{"agent:billing", "Agent:reports", "agent:Reports", "agent:reports ", " agent:reports",
		"agent:reports\u200b", "agent:r\u0435ports", "user:dana", "policy:lane-1", "agent:reports.", ""} {
		n++
		_, err := a.Propose(ctx, call("read", "user:dana", agent, n))
		assert.Error(t, err, "A proposed as %q", agent)
	}
	for _, user := range []string{"user:erin", "user:Dana", "USER:dana", "user:dana ", "user:d\u0430na", "user:dana.",
		"agent:reports", "grant:x", ""} {
		n++
		_, err := a.Propose(ctx, call("read", user, "agent:reports", n))
		assert.Error(t, err, "A proposed for %q", user)
	}
	// B never touches A's tickets, whatever their state.
	for _, id := range []stepup.TicketID{own.ID, pending.ID} {
		_, err := b.Execute(ctx, id)
		assert.ErrorIs(t, err, stepup.ErrNotFound)
		_, err = b.Cancel(ctx, id, "mine now")
		assert.ErrorIs(t, err, stepup.ErrNotFound)
		wctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = b.Wait(wctx, id)
		assert.Error(t, err)
	}
	got, err := h.Gate.Ticket(ctx, pending.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status, "B changed A's ticket")
	_, err = a.Execute(ctx, own.ID)
	require.NoError(t, err, "A's own allowed call runs, once B's attempts are over")

	// Spellings of A's token, and the token in other places, authenticate nothing.
	for _, auth := range []string{"Bearer " + strings.ToUpper(tokA), "Bearer " + tokA + "x", "Bearer " + tokA[:len(tokA)-1],
		"Basic " + tokA, "Bearer  " + tokA + ",", tokA + " Bearer", "Bearer " + tokB[:8] + tokA[8:]} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/tickets/"+string(pending.ID)+"/cancel",
			strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", auth)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%q", auth)
	}
}
