package main

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// dana is the principal the fixtures' servers are configured with.
var dana = canon.Principal{User: "user:dana", Agent: "agent:mcp", Delegations: []string{}}

// fixture is a gated MCP server on a stepuptest gate (store/memory, fake
// clock, user:dana enrolled) with a real go-sdk client connected to it
// over in-memory transports.
type fixture struct {
	h       *stepuptest.Harness
	rec     *recorder
	pending chan stepup.Ticket
	srv     *mcp.Server
	cs      *mcp.ClientSession
}

// newFixture builds the fixture for upstream tools and the integrator's
// entries (nil: the seed's); edit adjusts the server's configuration.
func newFixture(t testing.TB, upstream []*mcp.Tool, entries []policy.Tool, edit func(*serverConfig)) *fixture {
	t.Helper()
	if upstream == nil {
		upstream, entries = seedUpstream(), seedEntries()
	}
	entries, tools, _, err := confirmCatalog(upstream, entries)
	require.NoError(t, err)
	cat, err := policy.NewCatalog(policyVersion, entries...)
	require.NoError(t, err)
	f := &fixture{rec: newRecorder(), pending: make(chan stepup.Ticket, 16)}
	opts := []gate.Option{gate.WithPollInterval(2 * time.Millisecond)}
	for _, e := range entries {
		opts = append(opts, gate.WithExecutor(e.Name, f.rec))
	}
	f.h = stepuptest.NewGate(t, cat, opts...)
	cfg := serverConfig{Principal: dana, Task: "t-42", WaitTimeout: time.Minute,
		OnPending: func(tk stepup.Ticket) { f.pending <- tk }}
	if edit != nil {
		edit(&cfg)
	}
	f.srv = gatedServer(f.h.Gate, tools, cfg)
	f.cs = f.connect(t)
	return f
}

// connect opens another client session (another MCP session) to the server.
func (f *fixture) connect(t testing.TB) *mcp.ClientSession {
	t.Helper()
	cs, hangUp, err := connect(context.Background(), f.srv)
	require.NoError(t, err)
	t.Cleanup(hangUp)
	return cs
}

// call makes a tools/call and requires it to be answered with a result.
func call(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	return res
}

// callAsync makes a tools/call on its own goroutine.
func callAsync(cs *mcp.ClientSession, tool string, args map[string]any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		ch <- callResult{res, err}
	}()
	return ch
}

// next returns the next ticket that waits for a person.
func (f *fixture) next(t *testing.T) stepup.Ticket {
	t.Helper()
	select {
	case tk := <-f.pending:
		return tk
	case <-time.After(10 * time.Second):
		t.Fatal("no call is waiting for approval")
		return stepup.Ticket{}
	}
}

// result waits for an asynchronous call's answer.
func result(t *testing.T, ch <-chan callResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.res
	case <-time.After(10 * time.Second):
		t.Fatal("the call was not answered")
		return nil
	}
}

func email(to string) map[string]any {
	return map[string]any{"to": to, "subject": "Q3 summary", "attachment": "q3.csv"}
}
