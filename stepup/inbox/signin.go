package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/remote"
)

// cookieName is the session cookie's name: "__Host-" prefixed on an
// https origin, so the browser keeps it Secure, host-only and on path /.
func (in *Inbox) cookieName() string {
	if in.secure {
		return "__Host-asu-inbox"
	}
	return "asu-inbox"
}

func (in *Inbox) setCookie(w http.ResponseWriter, value string, expires time.Time, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: in.cookieName(), Value: value, Path: "/", Expires: expires,
		MaxAge: maxAge, Secure: in.secure, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

func (in *Inbox) clearCookie(w http.ResponseWriter) {
	in.setCookie(w, "", time.Unix(0, 0), -1)
}

// current returns the request's live session: the cookie's MAC holds, it
// has not expired or been signed out, and its credential still stands.
func (in *Inbox) current(r *http.Request) (session, error) {
	c, err := r.Cookie(in.cookieName())
	if err != nil {
		return session{}, fmt.Errorf("%w: no session cookie", errNoSession)
	}
	s, err := in.sessions.open(c.Value)
	if err != nil {
		return session{}, err
	}
	return s, in.recheck(r.Context(), s)
}

// recheck reports whether s is still live: unexpired, not signed out,
// its credential enrolled and unrevoked.
func (in *Inbox) recheck(ctx context.Context, s session) error {
	if !in.sessions.live(s, in.now()) {
		return fmt.Errorf("%w: the session expired or was signed out", errNoSession)
	}
	err := in.signIn.Recheck(ctx, s.who())
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", remote.ErrUnavailable, ctx.Err())
	case errors.Is(err, stepup.ErrRevoked), errors.Is(err, passkey.ErrUnknownCredential), errors.Is(err, stepup.ErrNotFound):
		return fmt.Errorf("%w: %w", errNoSession, err)
	}
	// The credential could not be checked (a store failure): refuse this
	// request, and keep the session for the next.
	return fmt.Errorf("inbox: session: %w", err)
}

// beginJSON is the answer of POST {prefix}/signin/begin.
type beginJSON struct {
	Options json.RawMessage `json:"options"`
	State   string          `json:"state"`
}

func (in *Inbox) begin(w http.ResponseWriter, r *http.Request) {
	if _, err := readBody(w, r, maxEmptyBytes); err != nil {
		in.refuse(w, r, err)
		return
	}
	opts, state, err := in.signIn.Begin(r.Context())
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, beginJSON{Options: opts, State: state})
}

// sessionJSON describes a session to its page.
type sessionJSON struct {
	User      string      `json:"user"`
	ExpiresAt time.Time   `json:"expires_at"`
	Now       time.Time   `json:"now"`
	Figures   *ownFigures `json:"figures,omitempty"` // with Options.Figures
}

func (in *Inbox) finish(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, maxSignInBytes)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	b, err := decodeSignIn(body)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	who, err := in.signIn.Finish(r.Context(), b.State, b.Credential)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	now := in.now()
	value, s, err := in.sessions.seal(who, now.Add(in.ttl))
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	in.setCookie(w, value, s.expires, int(s.expires.Sub(now)/time.Second))
	in.log.Info("inbox signed in", "approver", s.user, "expires", s.expires)
	writeJSON(w, http.StatusOK, sessionJSON{User: s.user, ExpiresAt: s.expires, Now: now})
}

func (in *Inbox) signOut(w http.ResponseWriter, r *http.Request) {
	if _, err := readBody(w, r, maxEmptyBytes); err != nil {
		in.refuse(w, r, err)
		return
	}
	if c, err := r.Cookie(in.cookieName()); err == nil {
		if s, err := in.sessions.open(c.Value); err == nil {
			in.sessions.end(s, in.now())
			in.log.Info("inbox signed out", "approver", s.user)
		}
	}
	in.clearCookie(w)
	writeJSON(w, http.StatusOK, map[string]string{"status": "signed out"})
}

func (in *Inbox) session(w http.ResponseWriter, r *http.Request) {
	s, err := in.current(r)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	reply := sessionJSON{User: s.user, ExpiresAt: s.expires, Now: in.now()}
	if m, ok := in.metrics(r.Context()); ok {
		f := own(m, s.user)
		reply.Figures = &f
	}
	writeJSON(w, http.StatusOK, reply)
}
