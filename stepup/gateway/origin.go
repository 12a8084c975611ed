package gateway

import (
	"net"
	"net/url"
	"strings"
)

// misdirected returns the URL a page request should have gone to, or ""
// when it came to the right place. Passkeys are bound to the relying
// party's origin: a browser on http://127.0.0.1:8701 refuses to use a
// passkey of http://localhost:8701 and reports an unhelpful error. The
// check applies only when the origin is on this machine (localhost or a
// loopback address), where no proxy rewrites the Host header; behind a
// proxy the page's script compares the browser's own origin instead.
func (s *Site) misdirected(host, requestURI string) string {
	u, err := url.Parse(s.rp.Origin)
	if err != nil || !loopback(u.Hostname()) || strings.EqualFold(host, u.Host) {
		return ""
	}
	if !strings.HasPrefix(requestURI, "/") {
		requestURI = "/" // never let the rest of a URI extend the origin's host or port
	}
	return strings.TrimSuffix(s.rp.Origin, "/") + requestURI
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
