package mcpgate_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// TestUpstreamCrashRestarts: while the upstream server is down, calls are
// tool errors saying so; it is restarted and calls work again.
func TestUpstreamCrashRestarts(t *testing.T) {
	w := newWorld(t)
	h := w.connect(hostOptions{urlElicitation: true})
	ctx := context.Background()
	w.upstream.crash()
	out, isErr := h.call(t, ctx, "read_file", `{"path":"x"}`)
	assert.True(t, isErr)
	// The proxy learns of the crash either before the call (not connected)
	// or from the call itself (it did not complete); either way a failure.
	assert.Contains(t, []string{"failed: the upstream server is not connected; it is being restarted",
		"unknown: the upstream server's connection ended during the call; the call may have had effects, do not repeat it"}, out)
	require.Eventually(t, func() bool { return w.up.Restarts() == 1 }, 5*time.Second, 10*time.Millisecond)
	out, isErr = h.call(t, ctx, "read_file", `{"path":"x"}`)
	assert.True(t, isErr)
	assert.Equal(t, "no such file", out, "the restarted server answered")
}

// TestUpstreamHangBounded: an upstream call that never answers ends at
// the call bound as a tool error; the approval is spent (the call may
// have had effects) and it is not run again.
func TestUpstreamHangBounded(t *testing.T) {
	w := newWorld(t, func(_ *mcpgate.Options, u *mcpgate.UpstreamOptions) { u.CallTimeout = 100 * time.Millisecond })
	h := w.connect(hostOptions{urlElicitation: true})
	var id stepup.TicketID
	defer h.decide(t, func(tid stepup.TicketID) {
		id = tid
		_, err := w.h.Approve(tid)
		assert.NoError(t, err)
	})()
	out, isErr := h.call(t, context.Background(), "write_file", `{"path":"h.txt","content":"hang"}`)
	assert.True(t, isErr)
	assert.Equal(t, "failed: the upstream server did not answer in time; the call may have had effects", out)
	_, err := w.h.Gate.Execute(context.Background(), id)
	assert.ErrorIs(t, err, stepup.ErrConsumed)
	assert.Equal(t, 1, w.upstream.count("write_file"))
}

// TestUpstreamOutputBounded: an answer larger than the bound is refused.
func TestUpstreamOutputBounded(t *testing.T) {
	w := newWorld(t, func(_ *mcpgate.Options, u *mcpgate.UpstreamOptions) { u.MaxOutputBytes = 200 })
	h := w.connect(hostOptions{urlElicitation: true})
	big := strings.Repeat("A", 1000)
	require.NoError(t, writeFile(w.dir, "big.txt", big))
	require.NoError(t, writeFile(w.dir, "small.txt", "ok"))
	out, isErr := h.call(t, context.Background(), "read_file", `{"path":"big.txt"}`)
	assert.True(t, isErr)
	assert.Equal(t, "failed: the upstream server's answer was too large", out)
	out, isErr = h.call(t, context.Background(), "read_file", `{"path":"small.txt"}`)
	assert.False(t, isErr)
	assert.Equal(t, "ok", out)
}

// TestExecutorRunsOncePerKey: a recovered execution with the same
// idempotency key gets the first run's answer without a second call.
func TestExecutorRunsOncePerKey(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, writeFile(w.dir, "k.txt", "v"))
	ex := w.up.Executor()
	eff := effect("read_file", `{"path":"k.txt"}`)
	for range 3 {
		out, err := ex.Execute(context.Background(), eff, "key-1")
		require.NoError(t, err)
		assert.Contains(t, string(out), `"v"`)
	}
	assert.Equal(t, 1, w.upstream.count("read_file"))
	_, err := ex.Execute(context.Background(), eff, "key-2")
	require.NoError(t, err)
	assert.Equal(t, 2, w.upstream.count("read_file"))
}

// TestAnnotationsFromCatalog: whatever upstream hints say, the host is
// shown the hints of the catalog's class, and the worst case for a tool
// the catalog does not admit.
func TestAnnotationsFromCatalog(t *testing.T) {
	w := newWorld(t)
	h := w.connect(hostOptions{})
	res, err := h.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	got := map[string]*mcp.ToolAnnotations{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool.Annotations
	}
	require.Len(t, got, 4)
	assert.True(t, got["read_file"].ReadOnlyHint)
	for _, name := range []string{"write_file", "run_shell"} { // upstream says read-only for both
		a := got[name]
		assert.False(t, a.ReadOnlyHint, name)
		require.NotNil(t, a.DestructiveHint, name)
		assert.True(t, *a.DestructiveHint, name)
	}
	assert.False(t, got["send_email"].ReadOnlyHint)
	assert.True(t, *got["send_email"].OpenWorldHint)
	assert.False(t, *got["send_email"].DestructiveHint)
}

// TestConnectFailsAtStart: an upstream that cannot be reached is an
// error at start, not a denial per call.
func TestConnectFailsAtStart(t *testing.T) {
	_, err := mcpgate.Connect(context.Background(), mcpgate.HTTP("http://127.0.0.1:1/mcp", nil), nil)
	assert.ErrorIs(t, err, mcpgate.ErrUpstreamDown)
	_, err = mcpgate.Connect(context.Background(), mcpgate.Command(nil, "/nonexistent/mcp-server"), nil)
	assert.ErrorIs(t, err, mcpgate.ErrUpstreamDown)
}

// TestConnectBoundedAtStart: a server that never answers the handshake
// is a failed start after the call bound, not a hang.
func TestConnectBoundedAtStart(t *testing.T) {
	_, err := mcpgate.Connect(context.Background(), mcpgate.Command(nil, "sh", "-c", "cat >/dev/null"),
		&mcpgate.UpstreamOptions{CallTimeout: 200 * time.Millisecond})
	assert.ErrorIs(t, err, mcpgate.ErrUpstreamDown)
}

// TestCloseLeavesNoGoroutines: a world of upstream, gate, proxy and host
// sessions, used and closed, leaves no goroutine of its own behind.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("world", func(t *testing.T) {
		w := newWorld(t)
		h := w.connect(hostOptions{urlElicitation: true})
		defer h.decide(t, func(id stepup.TicketID) {
			_, err := w.h.Approve(id)
			assert.NoError(t, err)
		})()
		_, isErr := h.call(t, context.Background(), "write_file", `{"path":"z.txt","content":"z"}`)
		assert.False(t, isErr)
		w.upstream.crash() // a restart in the middle, too
		require.Eventually(t, func() bool { return w.up.Restarts() == 1 }, 5*time.Second, 10*time.Millisecond)
	})
	// Polled here, not by assert.Eventually, whose poller is a goroutine too.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	assert.LessOrEqual(t, after, before, "goroutines left behind")
}
