package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/respell"
	"github.com/agentstepup/asu/stepup/gateway"
)

// rawStatus sends method target to base as written (no cleaning of the
// path on the client's side) and returns the status and headers.
func rawStatus(t *testing.T, base, method, target string) (int, http.Header) {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	host := u.Host
	if h, p, err := net.SplitHostPort(host); err == nil && h == "localhost" {
		host = net.JoinHostPort("127.0.0.1", p)
	}
	c, err := net.Dial("tcp", host)
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", method, target, u.Host)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestEveryListenerSetsItsHeaders: every response of each listener,
// redirects and refusals included, carries the headers of its party: the
// approval site's on the site (which mounts the inbox) and on the
// operator's, and nosniff and no-store on the agent API (its public API
// document is no-cache).
func TestEveryListenerSetsItsHeaders(t *testing.T) {
	p := startGateway(t, options{metrics: "127.0.0.1:0"})
	site := respell.Paths("/", "/inbox", "/inbox/", "/inbox/queue", "/inbox/static/inbox.js", "/approve/abc",
		"/enroll", "/static/site.css", "/nope", "/approve/../enroll", "/inbox/../approve/x")
	agent := respell.Paths("/v1/propose", "/v1/tickets/x/wait", "/v1/tickets/x/execute", gateway.OpenAPIPath, "/nope")
	metrics := respell.Paths(gateway.MetricsPath, gateway.FiguresPath, "/nope")
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		for _, target := range site {
			code, h := rawStatus(t, p.SiteURL, method, target)
			where := fmt.Sprintf("site %s %s: %d", method, target, code)
			assert.Equal(t, gateway.CSP, h.Get("Content-Security-Policy"), where)
			assert.Equal(t, "DENY", h.Get("X-Frame-Options"), where)
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), where)
			assert.Equal(t, "no-store", h.Get("Cache-Control"), where)
		}
		for _, target := range agent {
			code, h := rawStatus(t, p.AgentURL, method, target)
			where := fmt.Sprintf("agent API %s %s: %d", method, target, code)
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), where)
			if code == http.StatusOK && strings.Contains(target, gateway.OpenAPIPath) {
				assert.Equal(t, "no-cache", h.Get("Cache-Control"), "the public API document: %s", where)
				continue
			}
			assert.Equal(t, "no-store", h.Get("Cache-Control"), where)
		}
		for _, target := range metrics {
			code, h := rawStatus(t, p.MetricsURL, method, target)
			where := fmt.Sprintf("operator %s %s: %d", method, target, code)
			assert.Equal(t, gateway.CSP, h.Get("Content-Security-Policy"), where)
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), where)
			assert.Equal(t, "no-store", h.Get("Cache-Control"), where)
		}
	}
}
