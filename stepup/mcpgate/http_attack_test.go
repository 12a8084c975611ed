package mcpgate_test

import (
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
