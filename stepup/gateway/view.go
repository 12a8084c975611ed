package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// The "card shown" signal starts the gate's dwell time (gate.WithDwell),
// so only the approver's own page may send it. Origin and fetch-metadata
// headers are not authentication: any HTTP client, the agent included,
// sends whatever it likes. The signal is taken from one of two sources:
//
//   - the approval page: each rendering of it carries a fresh view token,
//     a random view id and an HMAC under the site's key over the ticket
//     id and the view id, which the page's script posts back; the site
//     checks it in constant time. A client that never rendered the page
//     has no token, and a token names one ticket only.
//   - a signed-in approver ([SiteOptions].Sessions): a request from the
//     session of someone who may decide the ticket, such as the
//     approvers' inbox on the same origin, needs no view token.

// viewIDBytes and viewMACBytes are a view token's parts; maxViewToken
// bounds the token read from a request before it is decoded.
const (
	viewIDBytes  = 16
	viewMACBytes = 32
	maxViewToken = 128
)

// MinSiteKey is the shortest [SiteOptions].Key accepted.
const MinSiteKey = 32

// viewLabel separates the site's view MACs from every other use of a key
// it shares (the gate's key, say).
const viewLabel = "asu/v1/site/view"

// Sessions says whether a request comes from a signed-in approver of the
// approval site, and who; an approvers' inbox on the site's origin
// implements it with its session cookie.
type Sessions interface {
	SignedIn(r *http.Request) (approver string, ok bool)
}

// views makes and checks view tokens under the site's view-token key.
type views struct{ key []byte }

// newViews derives the site's view-token key from key, or makes a random
// one when key is nil.
func newViews(key []byte) (views, error) {
	if key == nil {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return views{}, fmt.Errorf("%w: no randomness for the site's key", stepup.ErrConfig)
		}
		return views{k}, nil
	}
	if len(key) < MinSiteKey {
		return views{}, fmt.Errorf("%w: a site key is at least %d bytes", stepup.ErrConfig, MinSiteKey)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(viewLabel))
	return views{m.Sum(nil)}, nil
}

// mac is the MAC of view id of ticket id.
func (v views) mac(id stepup.TicketID, view []byte) []byte {
	m := hmac.New(sha256.New, v.key)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(id)))
	m.Write([]byte(viewLabel))
	m.Write([]byte{0})
	m.Write(n[:])
	m.Write([]byte(id))
	m.Write(view)
	return m.Sum(nil)
}

// issue returns a fresh view token of ticket id, for one rendering of
// its page.
func (v views) issue(id stepup.TicketID) (string, error) {
	view := make([]byte, viewIDBytes, viewIDBytes+viewMACBytes)
	if _, err := rand.Read(view); err != nil {
		return "", fmt.Errorf("%w: no randomness for a view token", remote.ErrInternal)
	}
	return base64.RawURLEncoding.EncodeToString(append(view, v.mac(id, view)...)), nil
}

// valid reports whether token is a view token the site made for ticket
// id.
func (v views) valid(id stepup.TicketID, token string) bool {
	if len(token) > maxViewToken {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != viewIDBytes+viewMACBytes {
		return false
	}
	return hmac.Equal(raw[viewIDBytes:], v.mac(id, raw[:viewIDBytes]))
}
