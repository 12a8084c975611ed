package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestDwellStartsWhenThePageShowsTheCard: fetching the approval page (a
// link preview, a prefetch, the agent opening its ticket's link) starts
// no wait; the page's script posting that the card is shown does, and an
// approval is accepted once the dwell has passed since then.
func TestDwellStartsWhenThePageShowsTheCard(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil, gate.WithDwell(gate.DefaultDwell))
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), nil)
	require.NoError(t, err)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}})
	require.NoError(t, err)

	for range 3 { // previews and prefetches
		resp, err := http.Get(gateway.ApprovalLink(srv.URL, tk.ID))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	h.Clock.Advance(gate.DefaultDwell * 10)
	p, err := h.Gate.Desk().Prompt(ctx, tk.ID)
	require.NoError(t, err)
	answer, err := h.Authenticator.Assert(p.Options)
	require.NoError(t, err)
	_, err = h.Gate.Desk().Approve(ctx, tk.ID, answer)
	require.ErrorIs(t, err, stepup.ErrTooFast, "no card was shown yet")

	post := func(path string, body []byte) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", stepuptest.RP().Origin)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	code, body := post("/approve/"+string(tk.ID)+"/shown", pageView(t, srv.URL, tk.ID))
	require.Equal(t, http.StatusOK, code, body)
	answer, err = h.Authenticator.Assert(p.Options)
	require.NoError(t, err)
	code, body = post("/approve/"+string(tk.ID), answer)
	assert.Equal(t, http.StatusTooEarly, code)
	assert.Contains(t, body, `"code":"too_fast"`)
	h.Clock.Advance(gate.DefaultDwell)
	answer, err = h.Authenticator.Assert(p.Options)
	require.NoError(t, err)
	code, body = post("/approve/"+string(tk.ID), answer)
	assert.Equal(t, http.StatusOK, code, body)

	// Only the site's own pages may say a card is shown.
	other, err := h.Gate.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"legal@example.com"}`),
		Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/approve/"+string(other.ID)+"/shown", bytes.NewReader([]byte(`{}`)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "https://agent.example.net")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}
