package inbox

import (
	"context"
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
	if in.https {
		return "__Host-asu-inbox"
	}
	return "asu-inbox"
}

func (in *Inbox) setCookie(w http.ResponseWriter, value string, expires time.Time, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: in.cookieName(), Value: value, Path: "/", Expires: expires,
		MaxAge: maxAge, Secure: in.https, HttpOnly: true, SameSite: http.SameSiteStrictMode})
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

// recheck reports whether s is still live: unexpired, not signed out on
// any replica, its credential enrolled and unrevoked.
func (in *Inbox) recheck(ctx context.Context, s session) error {
	live, err := in.sessions.live(ctx, s, in.now())
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%w: %w", remote.ErrUnavailable, ctx.Err())
	case err != nil:
		// Whether it was signed out elsewhere is unknown: refuse this
		// request, and keep the session for the next.
		in.log.Warn("inbox session: the sign-outs could not be read", "approver", s.user, "error", err.Error())
		return fmt.Errorf("inbox: session: %w", err)
	case !live:
		return fmt.Errorf("%w: the session expired or was signed out", errNoSession)
	}
	err = in.signIn.Recheck(ctx, s.who())
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
	in.log.Warn("inbox session: the credential could not be checked", "approver", s.user, "error", err.Error())
	return fmt.Errorf("inbox: session: %w", err)
}

// SignedIn returns the approver whose live session r carries. It
// implements gateway.Sessions: mounted beside the approval site (its
// SiteOptions.Sessions), it lets the inbox's page say a ticket's card is
// shown, which the site takes only from the ticket's own page or from a
// signed-in approver who may decide the ticket.
func (in *Inbox) SignedIn(r *http.Request) (string, bool) {
	s, err := in.current(r)
	if err != nil {
		return "", false
	}
	return s.user, true
}
