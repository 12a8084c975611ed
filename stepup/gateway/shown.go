package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"

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

// viewKey derives the site's view-token key from key, or makes a random
// one when key is nil.
func viewKey(key []byte) ([]byte, error) {
	if key == nil {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("%w: no randomness for the site's key", stepup.ErrConfig)
		}
		return k, nil
	}
	if len(key) < MinSiteKey {
		return nil, fmt.Errorf("%w: a site key is at least %d bytes", stepup.ErrConfig, MinSiteKey)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(viewLabel))
	return m.Sum(nil), nil
}

// viewMAC is the MAC of view id of ticket id.
func (s *Site) viewMAC(id stepup.TicketID, view []byte) []byte {
	m := hmac.New(sha256.New, s.viewKey)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(id)))
	m.Write([]byte(viewLabel))
	m.Write([]byte{0})
	m.Write(n[:])
	m.Write([]byte(id))
	m.Write(view)
	return m.Sum(nil)
}

// newView returns a fresh view token of ticket id, for one rendering of
// its page.
func (s *Site) newView(id stepup.TicketID) (string, error) {
	view := make([]byte, viewIDBytes, viewIDBytes+viewMACBytes)
	if _, err := rand.Read(view); err != nil {
		return "", fmt.Errorf("%w: no randomness for a view token", remote.ErrInternal)
	}
	return base64.RawURLEncoding.EncodeToString(append(view, s.viewMAC(id, view)...)), nil
}

// validView reports whether token is a view token the site made for
// ticket id.
func (s *Site) validView(id stepup.TicketID, token string) bool {
	if len(token) > maxViewToken {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != viewIDBytes+viewMACBytes {
		return false
	}
	return hmac.Equal(raw[viewIDBytes:], s.viewMAC(id, raw[:viewIDBytes]))
}

// shownJSON is the body of a "card shown" post.
type shownJSON struct {
	View string `json:"view"`
}

// shown records that the ticket's card is on the approver's screen: the
// page's script posts it, with the page's view token, once the card is
// in view, so a link preview or a prefetch (which fetch the page but run
// no script) never starts the gate's dwell time, and a client that never
// rendered the page cannot start it at all.
func (s *Site) shown(w http.ResponseWriter, r *http.Request) {
	id := stepup.TicketID(r.PathValue("id"))
	body, err := readAnswer(w, r)
	if err != nil {
		s.refuse(w, "shown", id, err)
		return
	}
	var in shownJSON
	if _, err := decodeStrict(body, &in, []string{"view"}); err != nil {
		s.refuse(w, "shown", id, err)
		return
	}
	if !s.validView(id, in.View) && !s.signedInApprover(r, id) {
		s.refuse(w, "shown", id, fmt.Errorf("%w: only the ticket's own page, or an approver signed in, says its card is shown",
			remote.ErrForbidden))
		return
	}
	if err := s.desk.Show(r.Context(), id); err != nil {
		s.refuse(w, "shown", id, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Shown bool `json:"shown"`
	}{true})
}

// signedInApprover reports whether r comes from the signed-in session of
// someone who may decide ticket id.
func (s *Site) signedInApprover(r *http.Request, id stepup.TicketID) bool {
	if s.sessions == nil {
		return false
	}
	who, ok := s.sessions.SignedIn(r)
	if !ok || who == "" {
		return false
	}
	p, err := s.desk.Prompt(r.Context(), id)
	return err == nil && slices.Contains(p.Approvers, who)
}
