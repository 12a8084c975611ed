package mcpgate_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/mcpgate"
)

// TestAbandonedHostSessionsAreBounded: over streamable HTTP every
// initialize opens a session, and a host that crashes, loses its network
// or simply never sends DELETE leaves it open. The proxy serves its
// handler with no idle timeout and no cap on sessions, and keeps, for
// every session that made a call, a goroutine waiting for the session's
// end and its entry in the session and taint maps: what it holds grows
// one for one with abandoned sessions, for ever. After many abandoned
// sessions, the proxy must eventually hold fewer goroutines than one per
// session: here, with an idle timeout of a second (the default is half
// an hour), they are closed.
func TestAbandonedHostSessionsAreBounded(t *testing.T) {
	const sessions = 300
	w := newWorld(t, func(o *mcpgate.Options, _ *mcpgate.UpstreamOptions) { o.SessionIdleTimeout = time.Second })
	token := strings.Repeat("t", 40)
	handler, err := w.proxy.HTTPHandler(token)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	require.NoError(t, writeFile(w.dir, "a.txt", "hello"))
	hc := &http.Client{}
	post := func(session, body string) string {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := hc.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		require.Less(t, resp.StatusCode, 300)
		return resp.Header.Get("Mcp-Session-Id")
	}

	base := runtime.NumGoroutine()
	for range sessions {
		id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",`+
			`"capabilities":{},"clientInfo":{"name":"crashing-host","version":"1"}}}`)
		require.NotEmpty(t, id)
		post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`)
		// The host goes away without DELETE.
	}
	hc.CloseIdleConnections()
	srv.CloseClientConnections()

	held := 0
	bounded := assert.Eventually(t, func() bool {
		held = runtime.NumGoroutine() - base
		return held < sessions
	}, 10*time.Second, 100*time.Millisecond)
	assert.True(t, bounded, "%d goroutines still held for %d abandoned host sessions", held, sessions)
}

// TestHostSessionsOverTheCapAreRefused: with MaxSessions 3, a fourth
// host session is refused with 503 and a JSON-RPC error that says why;
// once a host ends its session (DELETE), a new one is admitted.
func TestHostSessionsOverTheCapAreRefused(t *testing.T) {
	const max = 3
	w := newWorld(t, func(o *mcpgate.Options, _ *mcpgate.UpstreamOptions) { o.MaxSessions = max })
	token := strings.Repeat("t", 40)
	handler, err := w.proxy.HTTPHandler(token)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	do := func(method, session, body string) (int, string, string) {
		req, err := http.NewRequest(method, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"busy-host","version":"1"}}}`
	var ids []string
	for range max {
		code, id, _ := do(http.MethodPost, "", initialize)
		require.Equal(t, http.StatusOK, code)
		ids = append(ids, id)
	}
	code, id, body := do(http.MethodPost, "", initialize)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Empty(t, id)
	var rpc struct {
		Error struct{ Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rpc), body)
	assert.Contains(t, rpc.Error.Message, "too many open MCP sessions (at most 3)")

	// Sessions already open are served.
	code, _, _ = do(http.MethodPost, ids[0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	assert.Less(t, code, 300)

	code, _, _ = do(http.MethodDelete, ids[1], "")
	require.Equal(t, http.StatusNoContent, code)
	assert.Eventually(t, func() bool {
		code, _, _ := do(http.MethodPost, "", initialize)
		return code == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond, "an ended session frees its place")
}
