package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// TestServeGateway runs the server mode against a remote gate: an asu
// gateway's agent API over HTTP, reached with gateway.Client. A call that
// needs a person waits, is approved at the gate, and runs there.
func TestServeGateway(t *testing.T) {
	entries, _, _, err := confirmCatalog(seedUpstream(), seedEntries())
	require.NoError(t, err)
	cat, err := policy.NewCatalog(policyVersion, entries...)
	require.NoError(t, err)
	rec := newRecorder()
	h := stepuptest.NewGate(t, cat, gate.WithExecutor("send_email", rec))
	token, err := gateway.NewRuntimeToken()
	require.NoError(t, err)
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{{Token: token, Agent: "agent:mcp", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.Drain()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	o := options{gatewayURL: srv.URL, token: token, user: "user:dana", agent: "agent:mcp", task: "t-1", wait: time.Minute}
	go func() { done <- serve(ctx, o, st, &logs, nil) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0.1.0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	require.NoError(t, err)

	ch := callAsync(cs, "send_email", email("finance@example.com"))
	var waiting []store.Approval
	require.Eventually(t, func() bool {
		waiting, _, err = h.Store.List(ctx, store.Filter{States: []store.State{store.Pending}})
		return err == nil && len(waiting) == 1
	}, 10*time.Second, 2*time.Millisecond)
	_, err = h.Approve(stepup.TicketID(waiting[0].ID))
	require.NoError(t, err)
	res := result(t, ch)
	assert.False(t, res.IsError, resultText(res))
	require.Len(t, rec.recorded(), 1)
	assert.Equal(t, dana, rec.recorded()[0].Effect.Principal)

	require.NoError(t, cs.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop when the client hung up")
	}
}
