package inbox

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentstepup/asu/stepup/remote"
)

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

// unrecorded is what an approver is told when their sign-out could not
// be recorded in the store.
const unrecorded = "Your sign-out could not be saved, so this session may still work wherever a copy of it is kept " +
	"(another tab, device or server) until it expires. Sign out again; if this keeps happening, tell the administrator."

// signOut ends the cookie's session for every replica, fail-closed: when
// the store does not take the sign-out, the approver is told, the failure
// logged, and the cookie kept so that signing out again can still name
// the session.
func (in *Inbox) signOut(w http.ResponseWriter, r *http.Request) {
	if _, err := readBody(w, r, maxEmptyBytes); err != nil {
		in.refuse(w, r, err)
		return
	}
	if c, err := r.Cookie(in.cookieName()); err == nil {
		if s, err := in.sessions.open(c.Value); err == nil {
			if err := in.sessions.end(r.Context(), s, in.now()); err != nil {
				in.log.Error("inbox sign-out not recorded: the session still opens on other replicas",
					"approver", s.user, "expires", s.expires, "error", err.Error())
				var p problem
				p.Error.Code, p.Error.Message = remote.CodeUnavailable, unrecorded
				writeJSON(w, http.StatusServiceUnavailable, p)
				return
			}
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
		f := ownRow(m, s.user)
		reply.Figures = &f
	}
	writeJSON(w, http.StatusOK, reply)
}
