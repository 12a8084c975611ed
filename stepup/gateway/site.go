package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/internal/wire"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/remote"
)

// maxAnswerBytes bounds an approval, denial or enrollment body: a WebAuthn
// response is a few kilobytes.
const maxAnswerBytes = 64 << 10

// maxReasonRunes bounds a denial's reason, which goes back to the model.
const maxReasonRunes = 280

// SiteOptions tunes [NewSite]; nil means defaults.
type SiteOptions struct {
	// Logger receives one line per decision: ticket, approver, outcome or
	// error code. Nil discards.
	Logger *slog.Logger
	// Tickets, when set, lets a page of a ticket that can no longer be
	// decided say what became of it (denied, ran, revoked, ...) rather than
	// only that it was decided. [*gate.Gate] implements it.
	Tickets TicketReader
	// Key, at least [MinSiteKey] bytes, MACs the view tokens of the
	// approval pages (labelled apart from any other use of the key).
	// Replicas of the site behind one origin share it, so a page rendered
	// by one is trusted by another; nil means a random key of this
	// process.
	Key []byte
	// Sessions, when set, lets a signed-in approver who may decide a
	// ticket (the approvers' inbox) say its card is shown without the
	// ticket page's view token.
	Sessions Sessions
}

// TicketReader reads a ticket as it stands; [*gate.Gate] implements it.
type TicketReader interface {
	Ticket(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error)
}

// Site is the approval site: the pages approvers open, served on the
// relying party's origin, which the agent API never serves.
//
//	GET  /approve/{id}         the card and the passkey buttons
//	POST /approve/{id}         body: the WebAuthn assertion of the ticket's challenge
//	POST /approve/{id}/shown   body: {"view": the page's view token}: the card is on screen;
//	                           answers {"dwell_ms", "acceptable_in_ms"}: how long the page holds its approve button
//	POST /approve/{id}/picked  body: {"pick", "credential"}: the approval of a ticket whose approver picks its key value first
//	POST /approve/{id}/deny    body: {"credential": assertion of the deny challenge, "reason": "..."}
//	POST /approve/{id}/revoke  body: the same, for an approved ticket that has not run
//	GET  /enroll?invite=TOKEN  the enrollment page of an admin's invite
//	POST /enroll               body: {"invite": TOKEN, "credential": registration response}
//	GET  /static/...           the pages' script and style
//
// Pages are rendered by the gate's code from the stored effect, never by
// the agent. Every response carries [CSP], X-Frame-Options DENY,
// Referrer-Policy no-referrer, nosniff and no-store. A POST must come from
// the site's own origin and carry JSON.
//
// The approval page names who may approve the ticket. Once the ticket is
// approved and until it runs, the same link offers to revoke the
// approval, signed with the passkey of someone who may decide the ticket
// ([gate.Desk.Revoke]); after that it says what became of the ticket. A
// page opened on another host than the relying party's origin on this
// machine (127.0.0.1 for localhost) links to the right origin instead of
// failing in the browser's WebAuthn call. Refusals are worded for a
// person: the JSON answer of a post carries the sentence in "message"
// and the technical detail, when safe, in "detail"; an answer that
// verified but may not approve has a code of its own (already approved,
// needs another person, not yours, passkey revoked, too fast).
//
// The page shows where a ticket that needs several people stands ("1 of
// 2 approved by user:dana; waiting for one more of finance") and names
// those awaited. An approval is answered with the ticket as it stands
// after it and a sentence worded from that status in "message" (the
// first of two is not told the action may run), with the progress in
// "progress". The answer of an approval is verified before the dwell is
// judged, so every request without a valid answer is refused alike,
// whenever it comes.
//
// A denial also needs the approver's passkey: it signs receipt.DenyChallenge of
// the ticket, which no approval can be mistaken for, so neither a stranger
// who holds the link nor the agent can deny in the approver's name.
type Site struct {
	desk     *gate.Desk
	views    views
	sessions Sessions
	tickets  TicketReader
	admin    *passkey.Enrollment
	rp       passkey.RelyingParty
	log      *slog.Logger
	mux      *http.ServeMux
	handler  http.Handler // mux behind the protective headers
	static   map[string]asset
}

type asset struct {
	typ  string
	body []byte
}

// NewSite returns the approval site of a gate's desk, enrolling approvers
// through enrollment, whose relying party is rp (the one the gate's
// passkey approver and enrollment were built with; the site is served on
// rp.Origin).
func NewSite(desk *gate.Desk, enrollment *passkey.Enrollment, rp passkey.RelyingParty, opts *SiteOptions) (*Site, error) {
	if desk == nil || enrollment == nil || rp.Origin == "" {
		return nil, fmt.Errorf("%w: site needs a desk, an enrollment and a relying party", stepup.ErrConfig)
	}
	o := SiteOptions{}
	if opts != nil {
		o = *opts
	}
	vs, err := newViews(o.Key)
	if err != nil {
		return nil, err
	}
	s := &Site{desk: desk, views: vs, sessions: o.Sessions, tickets: o.Tickets, admin: enrollment, rp: rp,
		log: logger(o.Logger), mux: http.NewServeMux(), static: map[string]asset{}}
	for _, name := range []string{"webauthn.js", "approve.js", "enroll.js"} {
		body, err := staticFS.ReadFile("static/" + name)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", remote.ErrInternal, err)
		}
		s.static[name] = asset{"text/javascript; charset=utf-8", body}
	}
	s.static["site.css"] = asset{"text/css; charset=utf-8", siteCSS()}

	s.mux.HandleFunc("GET /approve/{id}", s.approvePage)
	s.mux.HandleFunc("POST /approve/{id}", s.sameOrigin(s.approve))
	s.mux.HandleFunc("POST /approve/{id}/deny", s.sameOrigin(s.denyTicket))
	s.mux.HandleFunc("POST /approve/{id}/picked", s.sameOrigin(s.approvePicked)) // site_confirm.go
	s.mux.HandleFunc("POST /approve/{id}/shown", s.sameOrigin(s.shown))
	s.mux.HandleFunc("POST /approve/{id}/revoke", s.sameOrigin(s.revokeTicket))
	s.mux.HandleFunc("GET /enroll", s.enrollPage)
	s.mux.HandleFunc("POST /enroll", s.sameOrigin(s.enroll))
	s.mux.HandleFunc("GET /static/{name}", s.asset)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.notice(w, http.StatusNotFound, "Not found", "There is nothing here.")
	})
	s.handler = secure(s.mux)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// InviteLink mints an enrollment invite for user through admin and returns
// the link to hand the user out of band: origin + "/enroll?invite=...".
// Minting is deliberately not on any listener.
func InviteLink(ctx context.Context, admin *passkey.Enrollment, origin, user string) (string, error) {
	token, err := admin.Invite(ctx, user)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(origin, "/") + "/enroll?invite=" + url.QueryEscape(token), nil
}

// ApprovalLink is the page an approver opens for ticket id.
func ApprovalLink(origin string, id stepup.TicketID) string {
	return strings.TrimSuffix(origin, "/") + "/approve/" + url.PathEscape(string(id))
}

func (s *Site) approvePage(w http.ResponseWriter, r *http.Request) {
	if s.redirected(w, r) {
		return
	}
	id := stepup.TicketID(r.PathValue("id"))
	p, err := s.desk.Prompt(r.Context(), id)
	if errors.Is(err, stepup.ErrResolved) || errors.Is(err, stepup.ErrExpired) {
		s.decidedPage(w, r, id, err)
		return
	}
	if err != nil {
		s.refusedPage(w, err)
		return
	}
	view, err := s.views.issue(id)
	if err != nil {
		s.refusedPage(w, err)
		return
	}
	confirm, err := s.desk.Confirmation(r.Context(), id)
	if err != nil {
		s.refusedPage(w, err)
		return
	}
	page := approvePage{Confirm: confirm, Title: "Approve: " + p.Ticket.Tool, ID: string(p.Ticket.ID), Origin: s.rp.Origin,
		Expires: expiry(p.Ticket.ExpiresAt), Card: p.Card.HTML(), Summary: p.Card.SummaryHTML(), Approvers: p.Approvers,
		ApproveOptions: string(p.Options), DenyOptions: string(p.DenyOptions), View: view,
		Progress: p.Progress.Sentence(), Awaited: p.Progress.Awaited}
	s.render(w, "approve", page)
}

// redirected answers a page request that came to the wrong origin with a
// link to the right one, and reports whether it did.
func (s *Site) redirected(w http.ResponseWriter, r *http.Request) bool {
	to := s.misdirected(r.Host, r.URL.RequestURI())
	if to == "" {
		return false
	}
	s.log.Info("page refused", "code", "wrong_origin", "status", http.StatusMisdirectedRequest)
	s.renderStatus(w, http.StatusMisdirectedRequest, "notice", noticePage{Title: "Open this page at " + s.rp.Origin,
		Text: "Passkeys work only on the origin they were made for, " + s.rp.Origin +
			". This page was opened at " + r.Host + ", where the browser would refuse them. Open it here instead:",
		Link: to})
	return true
}

func (s *Site) approve(w http.ResponseWriter, r *http.Request) {
	id := stepup.TicketID(r.PathValue("id"))
	body, err := readAnswer(w, r)
	if err != nil {
		s.refuse(w, "approve", id, err)
		return
	}
	t, err := s.desk.Approve(r.Context(), id, body)
	if err != nil {
		s.refuse(w, "approve", id, err)
		return
	}
	s.log.Info("approved", "ticket", id, "digest", digestOf(t), "status", t.Status)
	_, progress := s.progressOf(r.Context(), id)
	writeJSON(w, http.StatusOK, decidedJSON{Ticket: wire.FromTicket(t), Message: decided(t, progress), Progress: progress})
}

// denyJSON is a denial's body.
type denyJSON struct {
	Credential json.RawMessage `json:"credential"`
	Reason     string          `json:"reason"`
}

func (s *Site) denyTicket(w http.ResponseWriter, r *http.Request) {
	id := stepup.TicketID(r.PathValue("id"))
	body, err := readAnswer(w, r)
	if err != nil {
		s.refuse(w, "deny", id, err)
		return
	}
	var d denyJSON
	if _, err := decodeStrict(body, &d, []string{"credential", "reason"}); err != nil {
		s.refuse(w, "deny", id, err)
		return
	}
	reason, err := cleanReason(d.Reason)
	if err != nil {
		s.refuse(w, "deny", id, err)
		return
	}
	t, err := s.desk.Deny(r.Context(), id, d.Credential, reason)
	if err != nil && t.ID == "" {
		s.refuse(w, "deny", id, err)
		return
	}
	s.log.Info("denied", "ticket", id, "status", t.Status)
	msg := "Denied. The agent is told so."
	if strings.HasPrefix(t.Reason, practiceReason) {
		msg = decided(t, "")
	}
	writeJSON(w, http.StatusOK, decidedJSON{Ticket: wire.FromTicket(t), Message: msg})
}

// enrollJSON is an enrollment's body.
type enrollJSON struct {
	Invite     string          `json:"invite"`
	Credential json.RawMessage `json:"credential"`
}

func (s *Site) enrollPage(w http.ResponseWriter, r *http.Request) {
	if s.redirected(w, r) {
		return
	}
	token := r.URL.Query().Get("invite")
	opts, err := s.admin.BeginEnroll(r.Context(), token)
	if err != nil {
		s.refusedPage(w, err)
		return
	}
	var o struct {
		User struct {
			Name string `json:"name"`
		} `json:"user"`
	}
	_ = json.Unmarshal(opts, &o)
	s.render(w, "enroll", enrollPage{RP: s.rp.Name, User: o.User.Name, Invite: token, Options: string(opts),
		Origin: s.rp.Origin})
}

func (s *Site) enroll(w http.ResponseWriter, r *http.Request) {
	body, err := readAnswer(w, r)
	if err != nil {
		s.refuse(w, "enroll", "", err)
		return
	}
	var e enrollJSON
	if _, err := decodeStrict(body, &e, []string{"invite", "credential"}); err != nil {
		s.refuse(w, "enroll", "", err)
		return
	}
	if _, err := s.admin.FinishEnroll(r.Context(), e.Invite, e.Credential); err != nil {
		s.refuse(w, "enroll", "", err)
		return
	}
	s.log.Info("enrolled")
	writeJSON(w, http.StatusOK, map[string]string{"status": "enrolled"})
}

func (s *Site) asset(w http.ResponseWriter, r *http.Request) {
	a, ok := s.static[r.PathValue("name")]
	if !ok {
		s.notice(w, http.StatusNotFound, "Not found", "There is nothing here.")
		return
	}
	w.Header().Set("Content-Type", a.typ)
	_, _ = w.Write(a.body)
}

// sameOrigin refuses a POST that a browser says comes from another site,
// or that is not JSON (which a cross-site form cannot send without a
// preflight this site never grants).
func (s *Site) sameOrigin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		fetchSite := r.Header.Get("Sec-Fetch-Site")
		ct := r.Header.Get("Content-Type")
		switch {
		case origin != "" && origin != s.rp.Origin,
			fetchSite != "" && fetchSite != "same-origin":
			s.refuse(w, "post", "", fmt.Errorf("%w: requests come from the approval site itself", remote.ErrForbidden))
		case !strings.HasPrefix(ct, "application/json"):
			s.refuse(w, "post", "", fmt.Errorf("%w: body must be application/json", remote.ErrInvalid))
		default:
			next(w, r)
		}
	}
}

// readAnswer reads a bounded POST body.
func readAnswer(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAnswerBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, fmt.Errorf("%w: at most %d bytes", remote.ErrTooLarge, maxAnswerBytes)
	case err != nil:
		return nil, fmt.Errorf("%w: body could not be read", remote.ErrInvalid)
	case len(bytes.TrimSpace(body)) == 0:
		return nil, fmt.Errorf("%w: empty body", remote.ErrInvalid)
	}
	return body, nil
}

// cleanReason refuses a reason too long or holding control characters:
// it is shown to the model, and a bidi control would change what it says.
func cleanReason(s string) (string, error) {
	s = strings.TrimSpace(s)
	n := 0
	for _, r := range s {
		n++
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return "", fmt.Errorf("%w: the reason holds control or format characters", remote.ErrInvalid)
		}
	}
	if n > maxReasonRunes {
		return "", fmt.Errorf("%w: the reason is longer than %d characters", remote.ErrInvalid, maxReasonRunes)
	}
	return s, nil
}

// siteError is a refusal of the approval site as its pages' script reads
// it: the stable code, a sentence for the person, and the detail when it
// is safe to show.
type siteError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Detail  string `json:"detail,omitempty"`
	} `json:"error"`
}

func (s *Site) refuse(w http.ResponseWriter, op string, id stepup.TicketID, err error) {
	code, status, detail := classify(err)
	s.log.Info("refused", "op", op, "ticket", id, "code", code, "status", status)
	var e siteError
	e.Error.Code, e.Error.Message, e.Error.Detail = code, say(code, detail), detail
	writeJSON(w, status, e)
}

// refusedPage answers a page request the desk refused with a page that
// says why in words, never with the error's detail.
func (s *Site) refusedPage(w http.ResponseWriter, err error) {
	code, status, _ := classify(err)
	s.log.Info("page refused", "code", code, "status", status)
	text, ok := pageWords[code]
	if !ok {
		text = say(code, "This request cannot be shown.")
	}
	s.notice(w, status, "Cannot continue", text)
}

func (s *Site) notice(w http.ResponseWriter, status int, title, text string) {
	s.renderStatus(w, status, "notice", noticePage{Title: title, Text: text})
}

func (s *Site) render(w http.ResponseWriter, name string, data any) {
	s.renderStatus(w, http.StatusOK, name, data)
}

func (s *Site) renderStatus(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		s.log.Error("page", "template", name, "code", remote.CodeInternal)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
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
	if !s.views.valid(id, in.View) && !s.signedInApprover(r, id) {
		s.refuse(w, "shown", id, fmt.Errorf("%w: only the ticket's own page, or an approver signed in, says its card is shown",
			remote.ErrForbidden))
		return
	}
	sh, err := s.desk.ShowFor(r.Context(), id)
	if err != nil {
		s.refuse(w, "shown", id, err)
		return
	}
	writeJSON(w, http.StatusOK, shownAnswer(sh))
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
