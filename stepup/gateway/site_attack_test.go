package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// dwellRig is a gate with the default dwell time behind its agent API and
// its approval site, and the agent's client.
type dwellRig struct {
	h      *stepuptest.Harness
	site   *httptest.Server
	client *remote.Client
}

func newDwellRig(t *testing.T) *dwellRig {
	t.Helper()
	h := stepuptest.NewGate(t, nil, gate.WithDwell(gate.DefaultDwell))
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
		{Token: agentToken, Agent: "agent:reports", Users: []string{stepuptest.Approver}},
	}, nil)
	require.NoError(t, err)
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), &gateway.SiteOptions{Tickets: h.Gate})
	require.NoError(t, err)
	apiSrv, siteSrv := httptest.NewServer(api), httptest.NewServer(site)
	t.Cleanup(apiSrv.Close)
	t.Cleanup(siteSrv.Close)
	client, err := remote.NewClient(apiSrv.URL, agentToken, apiSrv.Client())
	require.NoError(t, err)
	return &dwellRig{h: h, site: siteSrv, client: client}
}

// sitePost posts body to the approval site with the headers given (nil:
// none but the content type), as any HTTP client can.
func sitePost(t *testing.T, base, path string, hdr map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

// TestAgentCannotStartTheDwell: the dwell time is meant to run from the
// moment a person's screen shows the card ("the page's script says when
// the card is shown"). The agent holds its own ticket's id, and the
// approval site is reachable by whoever can reach the approvers' browsers.
// An agent that posts /approve/{id}/shown itself, as a browser would or
// with no browser headers at all, right after proposing, must not make a
// person's approval a moment after the page really showed the card count
// as a read-through one.
func TestAgentCannotStartTheDwell(t *testing.T) {
	origin := stepuptest.RP().Origin
	spellings := []map[string]string{
		nil, // a plain HTTP client: no Origin, no Sec-Fetch-Site
		{"Origin": origin},
		{"Origin": origin, "Sec-Fetch-Site": "same-origin"},
		{"Sec-Fetch-Site": "same-origin"},
		{"Content-Type": "application/json; charset=utf-8"},
		{"Content-Type": "application/jsonx"},
	}
	r := newDwellRig(t)
	ctx := context.Background()
	for i, hdr := range spellings {
		t.Run(fmt.Sprintf("spelling-%d", i), func(t *testing.T) {
			tk, err := r.client.Propose(ctx, stepup.Call{Tool: "send_email",
				Args:    json.RawMessage(fmt.Sprintf(`{"to":"finance@example.com","subject":"s%d"}`, i)),
				Session: fmt.Sprintf("sess-%d", i), Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)

			// The agent, not a person, says the card is shown, then waits
			// out the dwell.
			code, body := sitePost(t, r.site.URL, "/approve/"+string(tk.ID)+"/shown", hdr, []byte(`{}`))
			t.Logf("agent's shown post: %d %s", code, body)
			r.h.Clock.Advance(2 * gate.DefaultDwell)

			// The person opens the link: the page shows the card, says so
			// (with the view token the page carries), and the person
			// approves at once.
			p, err := r.h.Gate.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			code, body = sitePost(t, r.site.URL, "/approve/"+string(tk.ID)+"/shown",
				map[string]string{"Origin": origin, "Sec-Fetch-Site": "same-origin"}, pageView(t, r.site.URL, tk.ID))
			require.Equal(t, http.StatusOK, code, body)
			answer, err := r.h.Authenticator.Assert(p.Options)
			require.NoError(t, err)
			code, body = sitePost(t, r.site.URL, "/approve/"+string(tk.ID),
				map[string]string{"Origin": origin, "Sec-Fetch-Site": "same-origin"}, answer)
			assert.Equal(t, http.StatusTooEarly, code,
				"an approval the instant the person's page showed the card was accepted, because the agent "+
					"started the dwell %v earlier: %s", 2*gate.DefaultDwell, body)
		})
	}
}
