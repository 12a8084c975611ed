package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/agentstepup/asu/stepup/gateway"
)

// unixPrefix marks a -metrics address that is a unix socket's path.
const unixPrefix = "unix:"

// minOperatorToken is the shortest operator token a token file may hold.
const minOperatorToken = 32

// listenOperator opens the operator's listener (-metrics): a TCP address,
// or unix:PATH for a unix socket (mode 0600, refused if PATH exists). It
// serves Prometheus metrics and the approval figures, which name
// approvers, so with -operator-token-file every request needs that bearer
// token; a TCP listener beyond loopback without one is warned about on w.
// The agent API and the approval site never serve either. It returns the
// URL to print.
func listenOperator(o options, w io.Writer) (net.Listener, string, error) {
	if strings.HasPrefix(o.metrics, unixPrefix) {
		path := strings.TrimPrefix(o.metrics, unixPrefix)
		if path == "" {
			return nil, "", errors.New("-metrics unix:PATH: name the socket's path")
		}
		if _, err := os.Lstat(path); err == nil {
			return nil, "", fmt.Errorf("-metrics %s: %s exists; remove it if no gateway serves it", o.metrics, path)
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, "", fmt.Errorf("-metrics: %w", err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			ln.Close()
			return nil, "", fmt.Errorf("-metrics: %w", err)
		}
		return ln, o.metrics + " (GET " + gateway.MetricsPath + ")", nil
	}
	ln, err := net.Listen("tcp", o.metrics)
	if err != nil {
		return nil, "", fmt.Errorf("-metrics: %w", err)
	}
	if o.svc.operatorTokenFile == "" && !loopback(ln.Addr()) {
		fmt.Fprintf(w, "warning: -metrics %s listens beyond loopback without -operator-token-file: anyone who reaches it reads the metrics and the approvers' figures\n", o.metrics)
	}
	return ln, "http://" + ln.Addr().String() + gateway.MetricsPath, nil
}

// loopback reports whether addr is a loopback TCP address.
func loopback(addr net.Addr) bool {
	a, ok := addr.(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// operatorToken reads -operator-token-file: the token, surrounding white
// space trimmed, at least 32 bytes; nil without the flag.
func operatorToken(file string) ([]byte, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-operator-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minOperatorToken {
		return nil, fmt.Errorf("-operator-token-file %s: line 1: the token is %d bytes; it must be at least %d", file, len(tok), minOperatorToken)
	}
	return []byte(tok), nil
}

// operatorAuth admits a request to next only with the bearer token (nil
// token: every request), by the agent API's rule for reading one and in
// constant time (gateway.RequireBearer); its refusals carry the headers
// the metrics do.
func operatorAuth(token []byte, next http.Handler) http.Handler {
	if token == nil {
		return next
	}
	return gateway.RequireBearer(token, "asu-operator", next)
}
