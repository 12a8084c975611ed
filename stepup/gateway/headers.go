package gateway

import (
	"net/http"

	"github.com/agentstepup/asu/stepup/internal/sitehdr"
)

// CSP is the approval site's Content-Security-Policy: scripts, styles,
// fetches and images from its own origin only, nothing inline, no frames,
// no base URL, forms only to itself.
const CSP = sitehdr.CSP

// secure sets the approval site's headers on every response, errors
// included.
func secure(next http.Handler) http.Handler { return sitehdr.Secure(next) }
