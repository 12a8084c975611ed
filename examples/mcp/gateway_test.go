package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// remoteGateway is an asu gateway's agent API over HTTP on a stepuptest
// gate deciding with the built-in catalog, whose runtime token acts for
// agent.
func remoteGateway(t *testing.T, agent string) (*stepuptest.Harness, *stepuptest.Recorder, string, string) {
	t.Helper()
	cat, err := mcpgate.ParseCatalog(bytes.NewReader(seedCatalog))
	require.NoError(t, err)
	pol, err := cat.Policy(nil)
	require.NoError(t, err)
	rec := &stepuptest.Recorder{}
	h := stepuptest.NewGate(t, pol, gate.WithExecutor("send_email", rec))
	token, err := gateway.NewRuntimeToken()
	require.NoError(t, err)
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{{Token: token, Agent: agent, Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	t.Cleanup(api.Drain)
	return h, rec, srv.URL, token
}

// TestRunGateway runs against a remote gate with the default flags on
// both sides: the names agree, a call that needs a person waits, is
// approved at the gate, and runs there.
func TestRunGateway(t *testing.T) {
	h, rec, url, token := remoteGateway(t, "agent:reports") // the gateway example's default
	o := defaults()
	o.gatewayURL, o.token, o.wait = url, token, time.Minute
	cs, _, _, stop := start(t, o)
	defer stop()
	ctx := context.Background()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_email", Arguments: map[string]any{"to": "finance@example.com"}})
		ch <- answer{res, err}
	}()
	var waiting []store.Approval
	require.Eventually(t, func() bool {
		var err error
		waiting, _, err = h.Store.List(ctx, store.Filter{States: []store.State{store.Pending}})
		return err == nil && len(waiting) == 1
	}, 10*time.Second, 5*time.Millisecond)
	_, err := h.Approve(stepup.TicketID(waiting[0].ID))
	require.NoError(t, err)
	a := <-ch
	require.NoError(t, a.err)
	assert.False(t, a.res.IsError, resultText(a.res))
	require.Equal(t, 1, rec.Count())
	assert.Equal(t, "agent:reports", rec.Runs()[0].Principal.Agent)
}

// TestRunGatewayMismatch: a runtime token for another agent, or a wrong
// token, is an error at start-up naming the flags, not a denial per call.
func TestRunGatewayMismatch(t *testing.T) {
	_, _, url, token := remoteGateway(t, "agent:other")
	for name, tok := range map[string]string{"other agent": token, "wrong token": token + "x"} {
		t.Run(name, func(t *testing.T) {
			o := defaults()
			o.gatewayURL, o.token = url, tok
			st, _ := mcp.NewInMemoryTransports()
			err := run(context.Background(), o, st, &bytes.Buffer{}, nil)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), "-agent agent:reports"), err.Error())
		})
	}
}
