package inbox_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func TestSignInSetsAStrictCookie(t *testing.T) {
	r := newRig(t, nil)
	_, resp := r.trySignIn(t, r.erin)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	assert.Equal(t, "__Host-asu-inbox", c.Name, "an https origin's cookie is __Host- prefixed")
	assert.True(t, c.Secure)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Equal(t, "/", c.Path)
	assert.Empty(t, c.Domain)
	assert.Equal(t, int(inbox.DefaultSessionTTL/time.Second), c.MaxAge)

	resp, b := r.do(t, req{method: "GET", path: "/inbox/session", cookie: c.Name + "=" + c.Value})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var s struct {
		User      string    `json:"user"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	require.NoError(t, json.Unmarshal(b, &s))
	assert.Equal(t, erin, s.User)
	assert.True(t, s.ExpiresAt.Equal(r.Clock.Now().Add(inbox.DefaultSessionTTL)))
}

func TestQueue(t *testing.T) {
	r := newRig(t, nil)
	first := r.propose(t, "finance@example.com")
	r.Clock.Advance(time.Minute)
	second := r.propose(t, "payroll@example.com")
	cookie := r.signIn(t, r.erin)

	resp, b := r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var q queueOf
	require.NoError(t, json.Unmarshal(b, &q))
	assert.Equal(t, erin, q.User)
	require.Equal(t, []string{string(first), string(second)}, q.ids(), "soonest expiry first")
	e := q.Entries[0]
	assert.Equal(t, "send_email", e.Tool)
	assert.Equal(t, "user:dana", e.User)
	assert.Equal(t, "agent:reports", e.Agent)
	assert.Equal(t, "finance", e.Group)
	assert.ElementsMatch(t, []string{erin, finn}, e.Approvers)
	assert.Equal(t, []string{finn}, e.Others, "who else may decide")
	assert.Contains(t, e.Card, "finance@example.com")
	assert.Contains(t, e.Card, `class="asu-card`)
	assert.Equal(t, "/approve/"+string(first), e.Link)
	assert.True(t, q.Entries[0].ExpiresAt.Before(q.Entries[1].ExpiresAt))

	// The options are the ticket's own: its challenge and its deny
	// challenge, as the approval page shows them.
	p, err := r.Gate.Desk().Prompt(context.Background(), first)
	require.NoError(t, err)
	assert.Equal(t, challengeOf(t, p.Options), p.Challenge[:])
	assert.Equal(t, challengeOf(t, e.Approve), p.Challenge[:])
	assert.Equal(t, challengeOf(t, e.Deny), p.DenyChallenge[:])

	// Dana's own call goes to the group, not to her.
	dana := r.signIn(t, r.Authenticator)
	resp, b = r.do(t, req{method: "GET", path: "/inbox/queue", cookie: dana})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.NoError(t, json.Unmarshal(b, &q))
	assert.Empty(t, q.Entries)
}

func challengeOf(t *testing.T, options json.RawMessage) []byte {
	t.Helper()
	var o struct {
		Challenge string `json:"challenge"`
	}
	require.NoError(t, json.Unmarshal(options, &o))
	c, err := base64.RawURLEncoding.DecodeString(o.Challenge)
	require.NoError(t, err)
	return c
}

func TestSessionExpires(t *testing.T) {
	r := newRig(t, &inbox.Options{SessionTTL: 5 * time.Minute})
	cookie := r.signIn(t, r.erin)
	r.Clock.Advance(5*time.Minute - time.Second)
	resp, _ := r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	r.Clock.Advance(time.Second)
	resp, b := r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, string(b), `"code":"unauthorized"`)
	require.Len(t, resp.Cookies(), 1)
	assert.Equal(t, -1, resp.Cookies()[0].MaxAge, "the dead session's cookie is cleared")
}

func TestRevokingTheCredentialEndsTheSession(t *testing.T) {
	r := newRig(t, nil)
	cookie := r.signIn(t, r.erin)
	other := r.signIn(t, r.finn)
	s, _ := r.open(t, cookie)
	s.queue(t)

	require.NoError(t, r.Enrollment.RevokeCredential(context.Background(), r.erin.CredentialIDs()[0], "user:admin", "lost phone"))
	assert.True(t, s.ended(t), "the open stream ends with an end event")
	resp, _ := r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = r.do(t, req{method: "GET", path: "/inbox/queue", cookie: other})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "finn's session is not erin's")
	_, resp = r.trySignIn(t, r.erin)
	assert.Equal(t, http.StatusGone, resp.StatusCode, "nor does the revoked passkey sign in again")
}

func TestSignOut(t *testing.T) {
	r := newRig(t, nil)
	cookie := r.signIn(t, r.erin)
	second := r.signIn(t, r.erin)
	resp, _ := r.do(t, req{method: "POST", path: "/inbox/signout", cookie: cookie})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	assert.Equal(t, -1, resp.Cookies()[0].MaxAge)
	resp, _ = r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a copy of the cookie kept after sign-out is dead")
	resp, _ = r.do(t, req{method: "GET", path: "/inbox/queue", cookie: second})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another device's session stays")
}

func TestForgedCookies(t *testing.T) {
	r := newRig(t, nil)
	cookie := r.signIn(t, r.erin)
	name, value, _ := strings.Cut(cookie, "=")
	other := newRig(t, nil)
	foreign := other.signIn(t, other.erin)
	for label, c := range map[string]string{
		"none":          "",
		"empty":         name + "=",
		"garbage":       name + "=v1.AAAA",
		"other version": name + "=v2." + strings.TrimPrefix(value, "v1."),
		"truncated":     name + "=" + value[:len(value)-2],
		"other inbox":   foreign,
		"other name":    "asu-inbox=" + value,
	} {
		resp, _ := r.do(t, req{method: "GET", path: "/inbox/queue", cookie: c})
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, label)
		resp, _ = r.do(t, req{method: "GET", path: "/inbox/events", cookie: c})
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, label)
	}
}

// TestSessionCannotDecide: a session lists, and nothing else. Its cookie
// approves nothing on the approval site, no route of the inbox decides,
// and a sign-in assertion is refused as an approval; the ticket's own
// assertion, signed with the passkey, still approves.
func TestSessionCannotDecide(t *testing.T) {
	r := newRig(t, nil)
	id := r.propose(t, "finance@example.com")
	cookie := r.signIn(t, r.erin)

	for _, q := range []req{
		{method: "POST", path: "/approve/" + string(id), body: `{}`, cookie: cookie},
		{method: "POST", path: "/approve/" + string(id), body: `null`, cookie: cookie},
		{method: "POST", path: "/approve/" + string(id) + "/deny", body: `{"credential":{},"reason":""}`, cookie: cookie},
		{method: "POST", path: "/inbox/approve/" + string(id), body: `{}`, cookie: cookie},
		{method: "POST", path: "/inbox/queue", body: `{}`, cookie: cookie},
		{method: "POST", path: "/inbox/" + string(id), body: `{}`, cookie: cookie},
	} {
		resp, b := r.do(t, q)
		assert.GreaterOrEqual(t, resp.StatusCode, 400, "%s %s: %s", q.method, q.path, b)
	}

	// A sign-in assertion, fresh and valid for the sign-in, is not an approval.
	resp, b := r.do(t, req{method: "POST", path: "/inbox/signin/begin"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var begin struct {
		Options json.RawMessage `json:"options"`
	}
	require.NoError(t, json.Unmarshal(b, &begin))
	resp, b = r.approveOnSite(t, r.erin, string(id), begin.Options)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(b), "bad_assertion")

	got, err := r.Gate.Ticket(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status, "nothing above decided the ticket")

	resp, b = r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var q queueOf
	require.NoError(t, json.Unmarshal(b, &q))
	require.Len(t, q.Entries, 1)
	// And a ticket's assertion does not sign in.
	answer, err := r.erin.Assert(q.Entries[0].Approve)
	require.NoError(t, err)
	resp, b = r.do(t, req{method: "POST", path: "/inbox/signin/begin"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var st struct {
		State string `json:"state"`
	}
	require.NoError(t, json.Unmarshal(b, &st))
	body, _ := json.Marshal(map[string]any{"state": st.State, "credential": json.RawMessage(answer)})
	resp, _ = r.do(t, req{method: "POST", path: "/inbox/signin", body: string(body)})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Empty(t, resp.Cookies())

	resp, b = r.approveOnSite(t, r.erin, string(id), q.Entries[0].Approve)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	got, err = r.Gate.Ticket(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

func TestSameOriginAndBodies(t *testing.T) {
	r := newRig(t, nil)
	cookie := r.signIn(t, r.erin)
	huge := `{"state":"` + strings.Repeat("s", 70<<10) + `","credential":{}}`
	tests := []struct {
		name   string
		q      req
		status int
		code   string
	}{
		{"other origin", req{method: "POST", path: "/inbox/signin/begin", header: map[string]string{"Origin": "https://evil.example"}}, 403, "forbidden"},
		{"cross site", req{method: "POST", path: "/inbox/signin/begin", header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403, "forbidden"},
		{"same site", req{method: "POST", path: "/inbox/signout", header: map[string]string{"Sec-Fetch-Site": "same-site"}}, 403, "forbidden"},
		{"form post", req{method: "POST", path: "/inbox/signin", body: "state=x", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 400, "invalid"},
		{"text post", req{method: "POST", path: "/inbox/signin/begin", header: map[string]string{"Content-Type": "text/plain"}}, 400, "invalid"},
		{"json-ish type", req{method: "POST", path: "/inbox/signin/begin", header: map[string]string{"Content-Type": "application/jsonx"}}, 400, "invalid"},
		{"cross-site read", req{method: "GET", path: "/inbox/queue", cookie: cookie, header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403, "forbidden"},
		{"cross-site stream", req{method: "GET", path: "/inbox/events", cookie: cookie, header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403, "forbidden"},
		{"huge sign-in", req{method: "POST", path: "/inbox/signin", body: huge}, 413, "too_large"},
		{"huge begin", req{method: "POST", path: "/inbox/signin/begin", body: strings.Repeat(" ", 2<<10)}, 413, "too_large"},
		{"not json", req{method: "POST", path: "/inbox/signin", body: "{"}, 400, "invalid"},
		{"extra member", req{method: "POST", path: "/inbox/signin", body: `{"state":"s","credential":{},"user":"user:erin"}`}, 400, "invalid"},
		{"duplicate member", req{method: "POST", path: "/inbox/signin", body: `{"state":"s","state":"t","credential":{}}`}, 400, "invalid"},
		{"bad state", req{method: "POST", path: "/inbox/signin", body: `{"state":"s","credential":{}}`}, 403, inbox.CodeSignIn},
		{"bad credential", req{method: "POST", path: "/inbox/signin", body: `{"state":"s","credential":{"id":1}}`}, 403, inbox.CodeSignIn},
		{"unknown path", req{method: "GET", path: "/inbox/nothing"}, 404, "not_found"},
		{"unknown asset", req{method: "GET", path: "/inbox/static/other.js"}, 404, "not_found"},
		{"read of a post", req{method: "GET", path: "/inbox/signin"}, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := r.do(t, tt.q)
			assert.Equal(t, tt.status, resp.StatusCode, string(b))
			if tt.code != "" {
				assert.Contains(t, string(b), `"code":"`+tt.code+`"`)
				assert.Contains(t, string(b), `"message":"`, "worded for a person")
			}
			assert.Equal(t, inbox.CSP, resp.Header.Get("Content-Security-Policy"))
		})
	}

	// A sign-in whose assertion was made for another origin does not sign in.
	_, resp := r.trySignIn(t, r.erin, stepuptest.WithOrigin("https://evil.example"))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Empty(t, resp.Cookies())
}

func TestHeadersAndPage(t *testing.T) {
	r := newRig(t, nil)
	assert.Equal(t, gateway.CSP, inbox.CSP, "the inbox keeps the approval site's policy")
	for _, path := range []string{"/inbox/", "/inbox/static/inbox.js", "/inbox/static/inbox.css", "/inbox/queue", "/inbox/nothing"} {
		resp, _ := r.do(t, req{method: "GET", path: path})
		h := resp.Header
		assert.Equal(t, inbox.CSP, h.Get("Content-Security-Policy"), path)
		assert.Equal(t, "DENY", h.Get("X-Frame-Options"), path)
		assert.Equal(t, "no-store", h.Get("Cache-Control"), path)
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), path)
		assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"), path)
	}
	assert.Contains(t, inbox.CSP, "script-src 'self'")
	assert.Contains(t, inbox.CSP, "frame-ancestors 'none'")
	assert.NotContains(t, inbox.CSP, "unsafe-inline")

	resp, b := r.do(t, req{method: "GET", path: "/inbox/", header: map[string]string{"Sec-Fetch-Site": "cross-site"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, "a link from a mail or chat opens the page")
	page := string(b)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, page, `<script src="/inbox/static/inbox.js"></script>`)
	assert.Contains(t, page, `data-origin="https://approve.example.com"`)
	assert.Contains(t, page, `data-approve="/approve/"`)
	assert.Contains(t, page, fmt.Sprintf(`data-dwell="%d"`, gate.DefaultDwell.Milliseconds()),
		"the page holds a new card's approve button as long as the gate's default dwell")
	assert.NotRegexp(t, regexp.MustCompile(`<script>|<style|\sstyle=|\son[a-z]+=`), page, "nothing inline")

	resp, b = r.do(t, req{method: "GET", path: "/inbox/static/inbox.js"})
	assert.Equal(t, "text/javascript; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(b), "navigator.credentials.get")
	resp, b = r.do(t, req{method: "GET", path: "/inbox/static/inbox.css"})
	assert.Equal(t, "text/css; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(b), ".asu-card", "the card's style comes along")
}

// TestLocalhostOrigin: on http://localhost, where WebAuthn works without
// TLS, the cookie cannot be Secure or __Host-: it is plain, and still
// HttpOnly and SameSite=Strict. The page opened on another host of this
// machine links to the right origin.
func TestLocalhostOrigin(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	rp := passkey.RelyingParty{ID: "localhost", Origin: "http://localhost:8701"}
	approver, err := passkey.New(h.Store, rp)
	require.NoError(t, err)
	enroll, err := passkey.NewEnrollment(h.Store, rp)
	require.NoError(t, err)
	token, err := enroll.Invite(ctx, erin)
	require.NoError(t, err)
	creation, err := enroll.BeginEnroll(ctx, token)
	require.NoError(t, err)
	a := stepuptest.NewAuthenticator(rp.ID, rp.Origin)
	reg, err := a.Register(creation)
	require.NoError(t, err)
	_, err = enroll.FinishEnroll(ctx, token, reg)
	require.NoError(t, err)
	signIn, err := passkey.NewSignIn(approver)
	require.NoError(t, err)
	in, err := inbox.New(h.Gate.Desk(), signIn, rp, nil)
	require.NoError(t, err)

	for host, want := range map[string]int{"127.0.0.1:8701": http.StatusMisdirectedRequest, "localhost:8701": http.StatusOK} {
		w := serve(in, httptest.NewRequest(http.MethodGet, "http://"+host+"/inbox/", nil))
		assert.Equal(t, want, w.Code, host)
		if want != http.StatusOK {
			assert.Contains(t, w.Body.String(), `href="http://localhost:8701/inbox/"`)
			assert.NotContains(t, w.Body.String(), `id="inbox-list"`)
		}
	}

	post := func(path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, rp.Origin+path, strings.NewReader(body))
		r.Header.Set("Origin", rp.Origin)
		r.Header.Set("Content-Type", "application/json")
		return serve(in, r)
	}
	w := post("/inbox/signin/begin", "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var begin struct {
		Options json.RawMessage `json:"options"`
		State   string          `json:"state"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &begin))
	answer, err := a.Assert(begin.Options)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"state": begin.State, "credential": json.RawMessage(answer)})
	require.NoError(t, err)
	w = post("/inbox/signin", string(body))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	cookies := w.Result().Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	assert.Equal(t, "asu-inbox", c.Name)
	assert.False(t, c.Secure)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	r := httptest.NewRequest(http.MethodGet, rp.Origin+"/inbox/session", nil)
	r.AddCookie(c)
	w = serve(in, r)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), erin)
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestNewRefusesBadConfig(t *testing.T) {
	h := stepuptest.NewGate(t, nil)
	signIn, err := passkey.NewSignIn(stepuptest.Passkeys(h.Store))
	require.NoError(t, err)
	desk, rp := h.Gate.Desk(), stepuptest.RP()
	_, err = inbox.New(nil, signIn, rp, nil)
	assert.ErrorIs(t, err, stepup.ErrConfig)
	_, err = inbox.New(desk, nil, rp, nil)
	assert.ErrorIs(t, err, stepup.ErrConfig)
	for _, origin := range []string{"", "approve.example.com", "ftp://approve.example.com", "https://approve.example.com/inbox"} {
		_, err = inbox.New(desk, signIn, passkey.RelyingParty{ID: "approve.example.com", Origin: origin}, nil)
		assert.ErrorIs(t, err, stepup.ErrConfig, origin)
	}
	for name, o := range map[string]inbox.Options{
		"prefix without slash":  {Prefix: "inbox"},
		"prefix ending slash":   {Prefix: "/inbox/"},
		"prefix with quote":     {Prefix: `/in"box`},
		"prefix up":             {Prefix: "/a/../b"},
		"approve without slash": {ApprovePath: "/approve"},
		"approve quote":         {ApprovePath: `/"/`},
		"negative ttl":          {SessionTTL: -time.Second},
		"long ttl":              {SessionTTL: inbox.MaxSessionTTL + time.Second},
		"short key":             {Key: []byte("short")},
		"negative poll":         {Poll: -1},
		"negative streams":      {StreamsPerApprover: -1},
		"big limit":             {Limit: inbox.MaxLimit + 1},
		"long dwell":            {Dwell: gate.MaxDwell + time.Second},
	} {
		_, err := inbox.New(desk, signIn, rp, &o)
		assert.ErrorIs(t, err, stepup.ErrConfig, name)
	}
	in, err := inbox.New(desk, signIn, rp, &inbox.Options{Prefix: "/approvals/inbox", Dwell: -1})
	require.NoError(t, err)
	w := serve(in, httptest.NewRequest(http.MethodGet, rp.Origin+"/approvals/inbox/", nil))
	assert.Contains(t, w.Body.String(), `data-dwell="0"`, "a negative dwell holds nothing")
	assert.Contains(t, w.Body.String(), `src="/approvals/inbox/static/inbox.js"`)
	assert.Equal(t, "/approvals/inbox", in.Prefix())
	assert.Equal(t, "https://approve.example.com/approvals/inbox/", inbox.Link(rp.Origin, in.Prefix()))
}
