// Package sitehdr holds the headers every page and answer of the
// approval site carries, shared by the site (package gateway) and the
// inbox (package inbox), which serve one origin.
package sitehdr

import "net/http"

// CSP is the approval site's Content-Security-Policy: scripts, styles,
// fetches and images from its own origin only, nothing inline, no frames,
// no base URL, forms only to itself.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Secure sets the approval site's headers on every response, errors
// included: the CSP, no framing, no referrer, no sniffing, no caching,
// and the cross-origin isolation of opener and resources.
func Secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}
