package mcpgate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/remote"
)

const hostToken = "host-token-0123456789-0123456789-0123456789"

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPNeedsBearer: the streamable HTTP endpoint answers only with the
// bearer token; with it, a host lists and calls tools as over stdio.
func TestHTTPNeedsBearer(t *testing.T) {
	w := newWorld(t)
	_, err := w.proxy.HTTPHandler("short")
	assert.ErrorIs(t, err, stepup.ErrConfig)
	hh, err := w.proxy.HTTPHandler(hostToken)
	require.NoError(t, err)
	srv := httptest.NewServer(hh)
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, auth := range []string{"", "Bearer", "Bearer " + hostToken[:len(hostToken)-1], "bearer " + hostToken, "Basic " + hostToken, "Bearer " + hostToken + "x"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%q", auth)
	}

	require.NoError(t, writeFile(w.dir, "h.txt", "over http"))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-host", Version: "v1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{hostToken}}}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "h.txt"}})
	require.NoError(t, err)
	assert.Equal(t, "over http", resultText(res))
}

// TestProbeFindsMismatch: against a gateway whose runtime token acts for
// another agent or user, or with a wrong token, the start-up probe fails;
// with the right ones it passes, and the gate denied the probe.
func TestProbeFindsMismatch(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, mcpgate.Probe(context.Background(), w.h.Gate, principal))

	token := "runtime-token-0123456789-0123456789-0123"
	api, err := gateway.NewAgentAPI(w.h.Gate, []gateway.RuntimeToken{{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, tc := range []struct {
		name  string
		token string
		p     canon.Principal
		ok    bool
	}{
		{"matching", token, canon.Principal{User: "user:dana", Agent: "agent:reports"}, true},
		{"other agent", token, canon.Principal{User: "user:dana", Agent: "agent:mcp"}, false},
		{"other user", token, canon.Principal{User: "user:eve", Agent: "agent:reports"}, false},
		{"wrong token", token + "x", canon.Principal{User: "user:dana", Agent: "agent:reports"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := remote.NewClient(srv.URL, tc.token, nil)
			require.NoError(t, err)
			err = mcpgate.Probe(context.Background(), rt, tc.p)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}
