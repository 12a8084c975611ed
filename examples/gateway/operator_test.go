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

// TestOperatorListenerNeedsItsToken: with -operator-token-file, the
// metrics and the figures answer only the exact bearer token; every other
// spelling, and no token, is refused.
func TestOperatorListenerNeedsItsToken(t *testing.T) {
	tok := strings.Repeat("0123456789abcdef", 3)
	o := options{metrics: "127.0.0.1:0"}
	o.svc.operatorTokenFile = writeToken(t, tok)
	p := startGateway(t, o)
	assert.Contains(t, p.printed(), "with the bearer token in "+o.svc.operatorTokenFile)
	base := strings.TrimSuffix(p.MetricsURL, gateway.MetricsPath)
	for _, path := range []string{gateway.MetricsPath, gateway.FiguresPath, gateway.FiguresPath + ".json"} {
		assert.Equal(t, http.StatusOK, operatorGet(t, http.DefaultClient, base+path, "Bearer "+tok), path)
		for _, bad := range []string{"", "Bearer", "Bearer ", "bearer " + tok, "Bearer " + tok[:len(tok)-1],
			"Bearer " + tok + "x", "Basic " + tok, "Bearer " + strings.ToUpper(tok), tok} {
			assert.Equal(t, http.StatusUnauthorized, operatorGet(t, http.DefaultClient, base+path, bad), "%s with %q", path, bad)
		}
	}
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
