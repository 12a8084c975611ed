package mcpgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// heldCanceller is the runtime's own Cancel, held at its door: the first
// Cancel says it is about to withdraw its ticket and waits for the test
// to let it through, so a test can put another host call in that gap.
type heldCanceller struct {
	real      stepup.Canceller
	once      sync.Once
	arrived   chan stepup.TicketID
	proceed   chan struct{}
	withdrawn chan struct{}
	// ignoreCtx commits the held withdrawal even when its context was
	// cancelled meanwhile, as a remote gateway that had the request.
	ignoreCtx bool
}

func newHeldCanceller() *heldCanceller {
	return &heldCanceller{arrived: make(chan stepup.TicketID, 1), proceed: make(chan struct{}),
		withdrawn: make(chan struct{})}
}

func (c *heldCanceller) Cancel(ctx context.Context, id stepup.TicketID, why string) (stepup.Ticket, error) {
	first := false
	c.once.Do(func() { first = true })
	if !first {
		return c.real.Cancel(ctx, id, why)
	}
	c.arrived <- id
	<-c.proceed
	defer close(c.withdrawn)
	if c.ignoreCtx {
		ctx = context.WithoutCancel(ctx)
	}
	return c.real.Cancel(ctx, id, why)
}

// TestLastQuitterDoesNotCancelANewJoiner: the proxy promises that a
// ticket identical calls share is cancelled "only when the last of them
// gives up". A host call that gives up finds itself the last, leaves,
// and cancels; an identical call of the same session that the gate
// merges into the still-pending ticket in that moment joins a fresh
// flight and waits, yet the ticket it waits on is withdrawn under it: the
// person who opens its link finds it cancelled, and the call is answered
// "cancelled by the agent" though it never gave up.
func TestLastQuitterDoesNotCancelANewJoiner(t *testing.T) {
	held := newHeldCanceller()
	w := newWorld(t, func(o *mcpgate.Options, _ *mcpgate.UpstreamOptions) { o.Canceller = held })
	held.real = w.h.Gate
	h := w.connect(hostOptions{urlElicitation: true})
	args := `{"path":"j.txt","content":"joined"}`

	quitter, quit := context.WithCancel(context.Background())
	quitDone := make(chan struct{})
	go func() {
		defer close(quitDone)
		_, err := h.cs.CallTool(quitter, callParams("write_file", args))
		assert.Error(t, err, "the quitter's own request ends with its context")
	}()
	first := ticketOf(t, h.nextLink(t))
	quit()
	id := <-held.arrived // the quitter left as the last waiter and is cancelling
	require.Equal(t, first, id)

	type answer struct {
		text  string
		isErr bool
	}
	joined := make(chan answer, 1)
	go func() {
		res, err := h.cs.CallTool(context.Background(), callParams("write_file", args))
		if !assert.NoError(t, err) {
			joined <- answer{}
			return
		}
		joined <- answer{resultText(res), res.IsError}
	}()
	second := ticketOf(t, h.nextLink(t)) // the joiner waits, its link sent
	require.Equal(t, first, second, "the gate merged the identical call into the pending ticket")

	close(held.proceed)
	<-held.withdrawn
	<-quitDone
	tk, err := w.h.Gate.Ticket(context.Background(), first)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status,
		"a host call still waits on this ticket, but it was withdrawn: %s", tk.Reason)

	if tk.Status == stepup.StatusPending {
		_, err = w.h.Approve(first)
		require.NoError(t, err)
	}
	got := <-joined
	assert.False(t, got.isErr, "the call that never gave up was answered: %s", got.text)
	if !got.isErr {
		assert.Equal(t, 1, w.upstream.count("write_file"))
	}
}

// foldedKeys are spellings of key that Go's encoding/json (and any
// case-insensitive reader) takes for key itself: ASCII case, and the two
// Unicode letters that fold to ASCII ones, long s (U+017F) and the Kelvin
// sign (U+212A). JCS orders them after the plain key when they replace a
// letter with a code point above it, so a reader where the last one wins
// takes theirs.
func foldedKeys(key string) []string {
	var out []string
	for i, r := range key {
		swap := map[rune][]string{'s': {"\u017f", "S"}, 'k': {"\u212a", "K"}}[r]
		if r >= 'a' && r <= 'z' && r != 's' && r != 'k' {
			swap = []string{strings.ToUpper(string(r))}
		}
		for _, s := range swap {
			out = append(out, key[:i]+s+key[i+1:])
		}
	}
	return append(out, strings.ToUpper(key))
}

// TestFoldedKeyCannotSlipPastALimit: the catalog limits "address" to
// example.com and lets the tool run unattended. A Go MCP server reads its
// arguments with encoding/json into a struct, as mcpgate's own tests do,
// and encoding/json matches member names case-insensitively, Unicode
// folds included, the last match winning. A host that adds "addreſs"
// (long s) beside an allowed "address" passes the limit, which reads
// "address" only, and the upstream sends to the other domain, with no
// person asked.
func TestFoldedKeyCannotSlipPastALimit(t *testing.T) {
	sent := make(chan string, 64)
	server := mcp.NewServer(&mcp.Implementation{Name: "notifier", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{Name: "notify", Description: "Send a notice.",
		InputSchema: json.RawMessage(`{"type":"object","required":["address"],"properties":{"address":{"type":"string"},"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Address string `json:"address"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			sent <- in.Address
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil
		})
	dial := func() mcp.Transport {
		st, ct := mcp.NewInMemoryTransports()
		_, err := server.Connect(context.Background(), st, nil)
		require.NoError(t, err)
		return ct
	}
	up, err := mcpgate.Connect(context.Background(), dial, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close() })
	cat, err := mcpgate.ParseCatalog(strings.NewReader(`{"version":"fold-1","tools":[
		{"name":"notify","class":"external","unattended":true,"allow_domains":{"address":["example.com"]}}]}`))
	require.NoError(t, err)
	pol, err := cat.Policy(up.Tools())
	require.NoError(t, err)
	g := stepuptest.NewGate(t, pol, gate.WithExecutor("notify", up.Executor()))
	proxy, err := mcpgate.NewProxy(g.Gate, principal, up, cat.Class, nil)
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := proxy.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	host, err := mcp.NewClient(&mcp.Implementation{Name: "hostile-host", Version: "v1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = host.Close() })

	for _, key := range foldedKeys("address") {
		for _, order := range []string{
			`{"address":"ops@example.com",%q:"mallory@evil.example"}`,
			`{%q:"mallory@evil.example","address":"ops@example.com"}`,
		} {
			args := fmt.Sprintf(order, key)
			res, err := host.CallTool(context.Background(), &mcp.CallToolParams{Name: "notify", Arguments: json.RawMessage(args)})
			require.NoError(t, err)
			if res.IsError {
				continue // refused: fine
			}
			to := <-sent
			assert.True(t, strings.HasSuffix(to, "@example.com"),
				"%s ran unattended and the upstream sent to %s past allow_domains example.com", args, to)
		}
	}
}
