package inbox_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/respell"
	"github.com/agentstepup/asu/stepup/inbox"
)

// rawRequest sends a request line as written, with no cleaning of its
// path on the client's side, and returns the response's status and
// headers.
func rawRequest(t *testing.T, srv *httptest.Server, method, target string) (int, http.Header) {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", method, target, srv.Listener.Addr())
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// siteTargets are request targets on the approval site's listener: its
// routes and the inbox's, each as written and respelled the ways a path
// gets cleaned or redirected (a slash doubled, "." and ".." segments, a
// trailing slash added or dropped).
func siteTargets() []string {
	bases := []string{"/", "/inbox", "/inbox/", "/inbox/queue", "/inbox/static/inbox.js", "/inbox/nothing",
		"/approve/abc", "/enroll", "/static/site.css", "/nope"}
	return respell.Paths(bases...)
}

// hasSiteHeaders reports which of the approval site's headers h lacks.
func hasSiteHeaders(h http.Header) []string {
	var missing []string
	for name, want := range map[string]string{"Content-Security-Policy": inbox.CSP, "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
		if h.Get(name) != want {
			missing = append(missing, name)
		}
	}
	return missing
}

// TestSecureOnEveryResponse: mounted as the package doc says, every
// response of the approval site's listener carries the site's headers,
// the redirects the mux answers itself included; mounted without Secure,
// those redirects carry none, which is what the wrapper is for.
func TestSecureOnEveryResponse(t *testing.T) {
	r := newRig(t, nil)
	bare := httptest.NewServer(r.mux())
	defer bare.Close()
	targets := siteTargets()
	require.Greater(t, len(targets), 60)
	bareMissing := 0
	for _, target := range targets {
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
			code, h := rawRequest(t, r.srv, method, target)
			assert.Empty(t, hasSiteHeaders(h), "%s %s: %d", method, target, code)
			if _, h := rawRequest(t, bare, method, target); len(hasSiteHeaders(h)) > 0 {
				bareMissing++
			}
		}
	}
	assert.Positive(t, bareMissing, "without Secure, the mux's own answers lack the headers")
}
