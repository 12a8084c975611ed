package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/gateway"
)

// operatorGet GETs path on the operator listener at base with token
// ("" for none) and returns the status.
func operatorGet(t *testing.T, c *http.Client, u, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func writeToken(t *testing.T, tok string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "operator.token")
	require.NoError(t, os.WriteFile(f, []byte(tok+"\n"), 0o600))
	return f
}

// operatorDo sends GET u with the Authorization header auth ("" for
// none) and returns the status and headers.
func operatorDo(t *testing.T, c *http.Client, u, auth string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// schemeSpellings are the bearer scheme in every case: all of the
// spellings of "Bearer" by the case of each letter.
func schemeSpellings() []string {
	var out []string
	for mask := range 1 << 6 {
		b := []byte("bearer")
		for i := range b {
			if mask&(1<<i) != 0 {
				b[i] -= 'a' - 'A'
			}
		}
		out = append(out, string(b))
	}
	return out
}

// authHeaders are Authorization headers for token tok: each admitted
// one, by the agent API's rule, and each refused one.
func authHeaders(tok string) (admitted, refused []string) {
	for _, s := range schemeSpellings() {
		admitted = append(admitted, s+" "+tok)
	}
	admitted = append(admitted, "Bearer  "+tok, "Bearer "+tok+" ", "bearer \t"+tok)
	refused = []string{"Bearer", "Bearer ", "bearer ", "Basic " + tok, "Bearer" + tok, "Bearer\t" + tok, "Bearer:" + tok,
		"Token " + tok, "Bearer " + tok[:len(tok)-1], "Bearer " + tok + "x", "Bearer " + strings.ToUpper(tok),
		"Bearer " + tok + ",", "Bearer x" + tok, tok, "Bearerx " + tok, "Beare " + tok, "Bearer " + tok + " " + tok}
	return admitted, refused
}

// TestOperatorListenerNeedsItsToken: with -operator-token-file, the
// metrics and the figures answer only the bearer token, read by the
// agent API's rule (the scheme in any case); every other header, and
// none, is refused, the refusal with the headers the metrics carry.
func TestOperatorListenerNeedsItsToken(t *testing.T) {
	tok := strings.Repeat("0123456789abcdef", 3)
	o := options{metrics: "127.0.0.1:0"}
	o.svc.operatorTokenFile = writeToken(t, tok)
	p := startGateway(t, o)
	assert.Contains(t, p.printed(), "with the bearer token in "+o.svc.operatorTokenFile)
	base := strings.TrimSuffix(p.MetricsURL, gateway.MetricsPath)
	admitted, refused := authHeaders(tok)
	for _, path := range []string{gateway.MetricsPath, gateway.FiguresPath, gateway.FiguresPath + ".json"} {
		for _, auth := range admitted {
			code, _ := operatorDo(t, http.DefaultClient, base+path, auth)
			assert.Equal(t, http.StatusOK, code, "%s with %q", path, auth)
		}
		for _, auth := range append(refused, "") {
			code, h := operatorDo(t, http.DefaultClient, base+path, auth)
			assert.Equal(t, http.StatusUnauthorized, code, "%s with %q", path, auth)
			assert.Equal(t, `Bearer realm="asu-operator"`, h.Get("WWW-Authenticate"))
			assert.Equal(t, gateway.CSP, h.Get("Content-Security-Policy"), "%s with %q", path, auth)
			assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
			assert.Equal(t, "no-store", h.Get("Cache-Control"))
		}
	}
}

// TestOperatorAndAgentReadBearerAlike: the operator listener and the
// agent API read an Authorization header by one rule: each admits its
// own token under exactly the spellings the other admits its own under.
func TestOperatorAndAgentReadBearerAlike(t *testing.T) {
	op := strings.Repeat("fedcba9876543210", 3)
	o := options{metrics: "127.0.0.1:0"}
	o.svc.operatorTokenFile = writeToken(t, op)
	p := startGateway(t, o)
	require.NotEmpty(t, p.Token)
	opAdmitted, opRefused := authHeaders(op)
	agentAdmitted, agentRefused := authHeaders(p.Token)
	for i := range opAdmitted {
		opCode, _ := operatorDo(t, http.DefaultClient, p.MetricsURL, opAdmitted[i])
		agentCode := agentCancel(t, p.AgentURL, agentAdmitted[i])
		assert.Equal(t, http.StatusOK, opCode, "operator %q", opAdmitted[i])
		assert.NotEqual(t, http.StatusUnauthorized, agentCode, "agent %q", agentAdmitted[i])
	}
	for i := range opRefused {
		opCode, _ := operatorDo(t, http.DefaultClient, p.MetricsURL, opRefused[i])
		agentCode := agentCancel(t, p.AgentURL, agentRefused[i])
		assert.Equal(t, http.StatusUnauthorized, opCode, "operator %q", opRefused[i])
		assert.Equal(t, http.StatusUnauthorized, agentCode, "agent %q", agentRefused[i])
	}
	// Neither takes the other's token.
	code, _ := operatorDo(t, http.DefaultClient, p.MetricsURL, "Bearer "+p.Token)
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, http.StatusUnauthorized, agentCancel(t, p.AgentURL, "Bearer "+op))
}

// agentCancel posts a cancel of an unknown ticket to the agent API with
// the Authorization header auth: 401 unless the header is admitted.
func agentCancel(t *testing.T, agentURL, auth string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, agentURL+"/v1/tickets/none/cancel", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestOperatorRoutesOnlyOnTheOperatorListener: the agent API and the
// approval site never serve the metrics or the figures.
func TestOperatorRoutesOnlyOnTheOperatorListener(t *testing.T) {
	p := startGateway(t, options{metrics: "127.0.0.1:0"})
	for _, base := range []string{p.AgentURL, p.SiteURL} {
		for _, path := range []string{gateway.MetricsPath, gateway.FiguresPath, gateway.FiguresPath + ".json"} {
			code := operatorGet(t, http.DefaultClient, base+path, "")
			assert.Contains(t, []int{http.StatusNotFound, http.StatusUnauthorized}, code, "%s%s", base, path)
			code, body := status(t, base+path)
			assert.NotContains(t, body, "asu_gate_", "%s%s answers %d", base, path, code)
		}
	}
}

// TestOperatorListenerOnAUnixSocket: -metrics unix:PATH serves on a
// socket only its owner may open, and removes it at exit.
func TestOperatorListenerOnAUnixSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "asu-op-") // short: socket paths are bounded
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "op.sock")
	p := startGateway(t, options{metrics: unixPrefix + sock})
	fi, err := os.Stat(sock)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	assert.Equal(t, http.StatusOK, operatorGet(t, c, "http://operator"+gateway.MetricsPath, ""))
	assert.NotContains(t, p.printed(), "warning:")
	p.stop(t)
	_, err = os.Stat(sock)
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket is removed at exit")
}

func TestOperatorListenerWarnsBeyondLoopbackWithoutAToken(t *testing.T) {
	var w bytes.Buffer
	ln, _, err := listenOperator(options{metrics: "0.0.0.0:0"}, &w)
	require.NoError(t, err)
	ln.Close()
	assert.Contains(t, w.String(), "warning: -metrics 0.0.0.0:0 listens beyond loopback without -operator-token-file")

	for _, o := range []options{{metrics: "127.0.0.1:0"}, {metrics: "0.0.0.0:0", svc: serviceOptions{operatorTokenFile: "set"}}} {
		w.Reset()
		ln, _, err := listenOperator(o, &w)
		require.NoError(t, err)
		ln.Close()
		assert.Empty(t, w.String(), o.metrics)
	}
}

func TestOperatorFlagsRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    options
		want string
	}{
		{"short token", options{metrics: "127.0.0.1:0", svc: serviceOptions{operatorTokenFile: writeToken(t, "short")}}, "line 1: the token is 5 bytes"},
		{"missing token file", options{metrics: "127.0.0.1:0", svc: serviceOptions{operatorTokenFile: "/nonexistent/op.token"}}, "-operator-token-file"},
		{"token without a listener", options{svc: serviceOptions{operatorTokenFile: writeToken(t, strings.Repeat("x", 40))}}, "give -metrics ADDR too"},
		{"empty socket path", options{metrics: "unix:"}, "name the socket's path"},
		{"socket path taken", options{metrics: "unix:" + writeToken(t, "x")}, "exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.agentAddr, tc.o.siteAddr, tc.o.log = "127.0.0.1:0", "127.0.0.1:0", &bytes.Buffer{}
			err := run(t.Context(), &bytes.Buffer{}, tc.o, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
