package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/agentstepup/asu/stepup/internal/sitehdr"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/remote"
)

// CSP is the inbox's Content-Security-Policy, the approval site's:
// scripts, styles, fetches (streams included) and images from its own
// origin only, nothing inline, no frames, no base URL, forms only to
// itself.
const CSP = sitehdr.CSP

// Body bounds: a sign-in carries a WebAuthn assertion of a few kilobytes;
// the other posts carry nothing.
const (
	maxSignInBytes = 64 << 10
	maxEmptyBytes  = 1 << 10
)

// Stable error codes of the inbox's own refusals, beside remote's.
const (
	CodeSignIn      = "sign_in_expired"
	CodeUnknownCred = "unknown_credential"
	CodeCounter     = "counter"
)

// errNotFound answers a path the inbox does not serve.
var errNotFound = errors.New("inbox: not found")

// codes are the inbox's rows of the error table, tried before remote's.
var codes = []remote.Code{
	{Err: errNoSession, Code: remote.CodeUnauthorized, Status: http.StatusUnauthorized},
	{Err: passkey.ErrSignIn, Code: CodeSignIn, Status: http.StatusForbidden},
	{Err: passkey.ErrUnknownCredential, Code: CodeUnknownCred, Status: http.StatusForbidden},
	{Err: passkey.ErrCounter, Code: CodeCounter, Status: http.StatusForbidden},
	{Err: errNotFound, Code: remote.CodeNotFound, Status: http.StatusNotFound},
}

// words says in a person's words why the inbox refused, by code.
var words = map[string]string{
	remote.CodeUnauthorized: "Sign in with your passkey to see your requests.",
	CodeSignIn:              "The sign-in took too long or was already used. Sign in again.",
	CodeUnknownCred:         "This passkey is not enrolled here.",
	CodeCounter:             "This passkey's signature counter did not advance; it may have been cloned. Tell the administrator.",
	remote.CodeRevoked:      "This passkey was revoked. Ask the administrator for a new invite.",
	remote.CodeNotPermitted: "Only people who approve requests sign in here.",
	remote.CodeBadAssertion: "Your passkey's answer did not verify. Try again.",
	remote.CodeForbidden:    "Requests must come from this site's own pages.",
	remote.CodeInvalid:      "The request was malformed.",
	remote.CodeTooLarge:     "The request was too large.",
	remote.CodeBusy:         "Too many inbox windows are open for you. Close one and reload.",
	remote.CodeNotFound:     "There is nothing here.",
	remote.CodeUnavailable:  "The service did not answer in time. Try again.",
	remote.CodeInternal:     "Something went wrong on the service. Try again later.",
}

// problem is a refusal as the inbox's script reads it, in the approval
// site's shape.
type problem struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (in *Inbox) refuse(w http.ResponseWriter, r *http.Request, err error) {
	code, status, _ := remote.Classify(err, codes...)
	in.log.Info("inbox refused", "path", r.URL.Path, "code", code, "status", status)
	var p problem
	p.Error.Code = code
	p.Error.Message = words[code]
	if p.Error.Message == "" {
		p.Error.Message = words[remote.CodeInternal]
	}
	if status == http.StatusUnauthorized {
		in.clearCookie(w)
	}
	writeJSON(w, status, p)
}

// Secure sets the approval site's headers on every response of next,
// errors included: [CSP] (frame-ancestors 'none'), X-Frame-Options DENY,
// no referrer, nosniff, no-store, and the cross-origin isolation of
// opener and resources. The inbox and the site set them on their own
// responses; wrap the handler that mounts them side by side too, since an
// http.ServeMux answers some requests itself (the redirects that clean a
// path or add its trailing slash) and those would carry none.
func Secure(next http.Handler) http.Handler { return sitehdr.Secure(next) }

// sameOrigin refuses a post that a browser says comes from another
// origin, or that is not JSON (which a cross-site form cannot send
// without a preflight the inbox never grants).
func (in *Inbox) sameOrigin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		site := r.Header.Get("Sec-Fetch-Site")
		switch {
		case origin != "" && origin != in.rp.Origin, site != "" && site != "same-origin":
			in.refuse(w, r, fmt.Errorf("%w: requests come from the approval site itself", remote.ErrForbidden))
		case !isJSON(r.Header.Get("Content-Type")):
			in.refuse(w, r, fmt.Errorf("%w: body must be application/json", remote.ErrInvalid))
		default:
			next(w, r)
		}
	}
}

// fromPage refuses a read that a browser says another site started: the
// session cookie is SameSite=Strict anyway, and no read is meant for
// another origin.
func (in *Inbox) fromPage(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
			in.refuse(w, r, fmt.Errorf("%w: requests come from the approval site itself", remote.ErrForbidden))
			return
		}
		next(w, r)
	}
}

func isJSON(ct string) bool {
	return ct == "application/json" || (len(ct) > 16 && ct[:16] == "application/json" && (ct[16] == ';' || ct[16] == ' '))
}

// readBody reads a post body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, fmt.Errorf("%w: at most %d bytes", remote.ErrTooLarge, limit)
	case err != nil:
		return nil, fmt.Errorf("%w: body could not be read", remote.ErrInvalid)
	}
	return body, nil
}

// signInBody is a sign-in's body.
type signInBody struct {
	State      string          `json:"state"`
	Credential json.RawMessage `json:"credential"`
}

// decodeSignIn decodes a sign-in body strictly: one JSON object with
// exactly the members "state" and "credential", each once, nothing after
// it.
func decodeSignIn(body []byte) (signInBody, error) {
	var b signInBody
	keys, err := topKeys(body)
	if err != nil {
		return b, fmt.Errorf("%w: %v", remote.ErrInvalid, err)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"credential", "state"}) {
		return b, fmt.Errorf("%w: the body holds exactly \"state\" and \"credential\"", remote.ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, fmt.Errorf("%w: the body does not parse", remote.ErrInvalid)
	}
	if _, err := dec.Token(); err != io.EOF {
		return b, fmt.Errorf("%w: data after the JSON value", remote.ErrInvalid)
	}
	if b.State == "" || len(b.Credential) == 0 || b.Credential[0] != '{' {
		return b, fmt.Errorf("%w: the body needs a state and a credential object", remote.ErrInvalid)
	}
	return b, nil
}

// topKeys returns the member names of the JSON object body, refusing
// anything else and a name given twice.
func topKeys(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("not a JSON object")
		}
		k, _ := tok.(string)
		if slices.Contains(keys, k) {
			return nil, fmt.Errorf("duplicate member %q", k)
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, errors.New("not a JSON object")
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("not a JSON object")
	}
	return keys, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"code":"internal"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
