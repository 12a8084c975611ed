package mcpgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// httpCatalog admits both tools of the HTTP upstream: lookups run at
// once, transfers need a person and stay under 100.
const httpCatalog = `{
  "version": "mcp-http-1",
  "tools": [
    {"name": "lookup", "class": "read"},
    {"name": "transfer", "class": "irreversible", "max_amount": {"amount": 100}}
  ]
}`

// Answers of the HTTP upstream's tools, and of the proxy while it is down.
const (
	downText     = "failed: the upstream server is not connected; it is being restarted"
	transferText = "transferred 40 to A-1"
)

// httpUpstream is an MCP server over streamable HTTP on one address, which
// can be stopped and started again there, as a server process that
// restarts. Each start is a new server (a generation); it counts what
// each generation ran.
type httpUpstream struct {
	t    *testing.T
	addr string

	mu   sync.Mutex
	ts   *httptest.Server
	gen  int
	runs map[string]int // "generation/tool"
}

func newHTTPUpstream(t *testing.T) *httpUpstream {
	u := &httpUpstream{t: t, runs: map[string]int{}}
	u.start()
	u.addr = u.ts.Listener.Addr().String()
	t.Cleanup(u.stop)
	return u
}

func (u *httpUpstream) url() string { return "http://" + u.addr + "/mcp" }

// start serves a new generation of the server, on the address of the
// first one once there is one.
func (u *httpUpstream) start() {
	u.t.Helper()
	u.mu.Lock()
	u.gen++
	gen := u.gen
	u.mu.Unlock()
	srv := mcp.NewServer(&mcp.Implementation{Name: "http-bank", Version: "v1"}, nil)
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	srv.AddTool(&mcp.Tool{Name: "lookup", Description: "Look up an account.",
		InputSchema: obj(`{"type":"object","required":["account"],"properties":{"account":{"type":"string"}}}`)},
		u.tool(gen, func(a map[string]any) string { return fmt.Sprintf("account %v: open", a["account"]) }))
	srv.AddTool(&mcp.Tool{Name: "transfer", Description: "Move money.",
		InputSchema: obj(`{"type":"object","required":["account","amount"],"properties":{"account":{"type":"string"},"amount":{"type":"number"}}}`)},
		u.tool(gen, func(a map[string]any) string { return fmt.Sprintf("transferred %v to %v", a["amount"], a["account"]) }))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewUnstartedServer(h)
	if u.addr != "" {
		l, err := net.Listen("tcp", u.addr)
		require.NoError(u.t, err, "the restarted server takes its old address")
		_ = ts.Listener.Close()
		ts.Listener = l
	}
	ts.Start()
	u.mu.Lock()
	u.ts = ts
	u.mu.Unlock()
}

// stop ends the current generation: its connections drop, as when the
// process exits.
func (u *httpUpstream) stop() {
	u.mu.Lock()
	ts := u.ts
	u.ts = nil
	u.mu.Unlock()
	if ts != nil {
		ts.CloseClientConnections()
		ts.Close()
	}
}

func (u *httpUpstream) tool(gen int, answer func(map[string]any) string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a map[string]any
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return nil, err
		}
		u.mu.Lock()
		u.runs[fmt.Sprintf("%d/%s", gen, req.Params.Name)]++
		u.mu.Unlock()
		return text(answer(a)), nil
	}
}

// count returns how many calls of tool generation gen ran.
func (u *httpUpstream) count(gen int, tool string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.runs[fmt.Sprintf("%d/%s", gen, tool)]
}

// httpWorld connects to a fresh HTTP upstream and puts httpCatalog's gate
// in front of it.
func httpWorld(t *testing.T) (*httpUpstream, *world) {
	t.Helper()
	srv := newHTTPUpstream(t)
	up, err := mcpgate.Connect(context.Background(), mcpgate.HTTP(srv.url(), nil),
		&mcpgate.UpstreamOptions{CallTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close() })
	return srv, gateWorld(t, up, t.TempDir(), httpCatalog)
}

func toolNames(tools []*mcp.Tool) []string {
	names := make([]string, 0, len(tools))
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return names
}

// approveNext approves, as the user, the ticket of the next approval link
// h is sent, and returns its id.
func approveNext(t *testing.T, w *world, h *host) stepup.TicketID {
	t.Helper()
	id := ticketOf(t, h.nextLink(t))
	_, err := w.h.Approve(id)
	require.NoError(t, err)
	return id
}

// TestHTTPUpstreamGatedCall: the gateway lists a streamable HTTP server's
// tools and offers them to the host; a read runs at once, a call the
// catalog sends to a person runs on the server exactly once after the
// approval, never again by its ticket, and one beyond the catalog's
// limit never reaches the server.
func TestHTTPUpstreamGatedCall(t *testing.T) {
	ctx := context.Background()
	srv, w := httpWorld(t)
	assert.ElementsMatch(t, []string{"lookup", "transfer"}, toolNames(w.up.Tools()))
	h := w.connect(hostOptions{urlElicitation: true})
	listed, err := h.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"lookup", "transfer"}, toolNames(listed.Tools))

	out, isErr := h.call(t, ctx, "lookup", `{"account":"A-1"}`)
	assert.False(t, isErr, out)
	assert.Equal(t, "account A-1: open", out)
	assert.Equal(t, 1, srv.count(1, "lookup"))
	assert.Empty(t, h.elicited, "a read needs no person")

	res := callLater(h, "transfer", `{"account":"A-1","amount":40}`)
	id := approveNext(t, w, h)
	r := answer(t, res)
	assert.False(t, r.isErr, r.text)
	assert.Equal(t, transferText, r.text)
	assert.Equal(t, 1, srv.count(1, "transfer"))
	_, err = w.h.Gate.Execute(ctx, id)
	assert.ErrorIs(t, err, stepup.ErrConsumed)
	assert.Equal(t, 1, srv.count(1, "transfer"), "the approval ran once")

	out, isErr = h.call(t, ctx, "transfer", `{"account":"A-1","amount":400}`)
	assert.True(t, isErr)
	assert.Equal(t, "denied: over the per-call limit", out)
	assert.Empty(t, h.elicited, "a denied call asks nobody")
	assert.Equal(t, 1, srv.count(1, "transfer"))
}

// TestHTTPUpstreamRestart: when the HTTP server goes away, calls are
// tool errors saying the upstream is down, promptly, not hangs; an
// approval given meanwhile is spent on that error (its ticket does not
// run again); once the server is back on its address the gateway
// reconnects by itself, lists its tools again, and calls run on the new
// server, each once.
func TestHTTPUpstreamRestart(t *testing.T) {
	ctx := context.Background()
	srv, w := httpWorld(t)
	h := w.connect(hostOptions{urlElicitation: true})
	out, isErr := h.call(t, ctx, "lookup", `{"account":"A-1"}`)
	require.False(t, isErr, out)

	srv.stop()
	require.Eventually(t, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		res, err := h.cs.CallTool(cctx, callParams("lookup", `{"account":"A-1"}`))
		return err == nil && res.IsError && resultText(res) == downText
	}, 5*time.Second, 20*time.Millisecond, "calls say the upstream is down")
	assert.Zero(t, w.up.Restarts())

	res := callLater(h, "transfer", `{"account":"A-1","amount":40}`)
	lost := approveNext(t, w, h)
	r := answer(t, res)
	assert.True(t, r.isErr)
	assert.Equal(t, downText, r.text)
	_, err := w.h.Gate.Execute(ctx, lost)
	assert.ErrorIs(t, err, stepup.ErrConsumed, "the approval was spent on the failed call")

	srv.start()
	require.Eventually(t, func() bool { return w.up.Restarts() == 1 }, 10*time.Second, 10*time.Millisecond)
	assert.ElementsMatch(t, []string{"lookup", "transfer"}, toolNames(w.up.Tools()))

	out, isErr = h.call(t, ctx, "lookup", `{"account":"A-2"}`)
	assert.False(t, isErr, out)
	assert.Equal(t, "account A-2: open", out)
	assert.Equal(t, 1, srv.count(2, "lookup"))

	res = callLater(h, "transfer", `{"account":"A-1","amount":40}`)
	approveNext(t, w, h)
	r = answer(t, res)
	assert.False(t, r.isErr, r.text)
	assert.Equal(t, transferText, r.text)
	assert.Equal(t, 1, srv.count(2, "transfer"), "the new approval ran once, on the new server")
	assert.Zero(t, srv.count(1, "transfer"), "nothing ran on the old server")
	assert.Equal(t, 1, w.up.Restarts())
}
