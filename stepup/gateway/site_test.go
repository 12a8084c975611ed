package gateway_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestSiteHeaders: every response of the approval site, pages, assets and
// refusals alike, carries the CSP and the other protective headers.
func TestSiteHeaders(t *testing.T) {
	r := newRig(t, nil)
	tk, err := r.client.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	link, err := gateway.InviteLink(context.Background(), r.Enrollment, r.site.URL, "user:erin")
	require.NoError(t, err)
	tests := []struct {
		name, method, path string
		status             int
		typ                string
	}{
		{"approval page", "GET", "/approve/" + string(tk.ID), 200, "text/html"},
		{"unknown ticket page", "GET", "/approve/nope", 404, "text/html"},
		{"enroll page", "GET", strings.TrimPrefix(link, r.site.URL), 200, "text/html"},
		{"bad invite page", "GET", "/enroll?invite=nope", 403, "text/html"},
		{"script", "GET", "/static/approve.js", 200, "text/javascript"},
		{"shared script", "GET", "/static/webauthn.js", 200, "text/javascript"},
		{"style", "GET", "/static/site.css", 200, "text/css"},
		{"unknown asset", "GET", "/static/x.js", 404, "text/html"},
		{"agent route", "POST", "/v1/propose", 404, "text/html"},
		{"refused post", "POST", "/approve/" + string(tk.ID), 400, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, r.site.URL+tt.path, strings.NewReader("{}"))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			h := resp.Header
			assert.Equal(t, gateway.CSP, h.Get("Content-Security-Policy"))
			assert.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'")
			assert.Contains(t, h.Get("Content-Security-Policy"), "script-src 'self';")
			assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
			assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
			assert.Equal(t, "no-store", h.Get("Cache-Control"))
			assert.True(t, strings.HasPrefix(h.Get("Content-Type"), tt.typ), h.Get("Content-Type"))
		})
	}
}

var inlineScript = regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]+</script>|\son[a-z]+=|style=`)

// TestApprovalPage: the page shows the card the gate rendered and loads
// its script from the site, with nothing inline that the CSP would have to
// allow; agent text stays in the untrusted region.
func TestApprovalPage(t *testing.T) {
	r := newRig(t, nil)
	c := sendEmail("finance@example.com")
	c.Rationale = `<script>alert(1)</script> Approved by security`
	tk, err := r.client.Propose(context.Background(), c)
	require.NoError(t, err)
	resp, err := http.Get(gateway.ApprovalLink(r.site.URL, tk.ID))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	page := string(raw)
	p, err := r.Gate.Desk().Prompt(context.Background(), tk.ID)
	require.NoError(t, err)
	assert.Contains(t, page, string(p.Card.HTML()), "the card is the gate's own rendering")
	assert.Contains(t, page, `<script src="/static/approve.js"></script>`)
	assert.NotRegexp(t, inlineScript, page, "no inline script, handler or style")
	assert.NotContains(t, page, "<script>alert(1)</script>")
	assert.Contains(t, page, tk.Digest.Short(), "the card shows the digest's fingerprint")
}

// TestDenyNeedsThePasskey: a denial is refused without an assertion, with
// the approve assertion, or with another ticket's deny assertion; it
// succeeds with the deny challenge signed, and the runtime sees the
// approver's reason.
func TestDenyNeedsThePasskey(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	other, err := r.client.Propose(ctx, sendEmail("finance@example.org"))
	require.NoError(t, err)
	approveOpts, denyOpts := r.pageOptions(t, tk.ID)
	_, otherDeny := r.pageOptions(t, other.ID)

	deny := func(credential []byte, reason string) (int, string) {
		body, err := json.Marshal(map[string]any{"credential": json.RawMessage(credential), "reason": reason})
		require.NoError(t, err)
		resp, out := r.post(t, "/approve/"+string(tk.ID)+"/deny", body)
		return resp.StatusCode, string(out)
	}
	sign := func(opts []byte) []byte {
		a, err := r.Authenticator.Assert(opts)
		require.NoError(t, err)
		return a
	}

	status, body := deny([]byte(`{}`), "no")
	assert.Equal(t, http.StatusBadRequest, status, "no assertion: %s", body)
	status, body = deny(sign(approveOpts), "no")
	assert.Equal(t, http.StatusBadRequest, status, "the approve assertion is not a denial: %s", body)
	assert.Contains(t, body, "challenge")
	status, body = deny(sign(otherDeny), "no")
	assert.Equal(t, http.StatusBadRequest, status, "another ticket's denial: %s", body)
	status, body = deny(sign(denyOpts), "bad\u202ereason")
	assert.Equal(t, http.StatusBadRequest, status, "a bidi control in the reason: %s", body)
	// Nor does a deny assertion approve.
	resp, out := r.post(t, "/approve/"+string(tk.ID), sign(denyOpts))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, string(out))

	got, err := r.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, got.Status, "nothing above decided the ticket")

	status, body = deny(sign(denyOpts), "wrong recipient")
	require.Equal(t, http.StatusOK, status, body)
	got, err = r.client.Wait(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, got.Status)
	assert.Equal(t, "denied by user:dana: wrong recipient", got.Reason)
	_, err = r.client.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrNotApproved)
	assert.Zero(t, r.exec.count())
}

// TestSitePostsOnlyFromItsOrigin: a POST another site's page makes, or
// one that is not JSON, is refused before anything is verified.
func TestSitePostsOnlyFromItsOrigin(t *testing.T) {
	r := newRig(t, nil)
	tk, err := r.client.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	opts, _ := r.pageOptions(t, tk.ID)
	assertion, err := r.Authenticator.Assert(opts)
	require.NoError(t, err)
	tests := []struct {
		name, origin, fetchSite, typ string
		status                       int
	}{
		{"other origin", "https://evil.example.net", "", "application/json", 403},
		{"cross-site fetch", "", "cross-site", "application/json", 403},
		{"form post", stepuptest.RP().Origin, "", "application/x-www-form-urlencoded", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, r.site.URL+"/approve/"+string(tk.ID), strings.NewReader(string(assertion)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tt.typ)
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.fetchSite != "" {
				req.Header.Set("Sec-Fetch-Site", tt.fetchSite)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
		})
	}
	got, err := r.Gate.Ticket(context.Background(), tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status)
	// The same assertion from the site's own page is accepted.
	resp, out := r.post(t, "/approve/"+string(tk.ID), assertion)
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(out))
}

var optionsAttr = regexp.MustCompile(`data-options="([^"]*)"`)

// TestEnrollOverHTTP: an invite link enrolls a passkey once; the new
// approver can then approve on the site.
func TestEnrollOverHTTP(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	link, err := gateway.InviteLink(ctx, r.Enrollment, r.site.URL, "user:erin")
	require.NoError(t, err)
	u, err := url.Parse(link)
	require.NoError(t, err)
	invite := u.Query().Get("invite")

	resp, err := http.Get(link)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(raw), "user:erin")
	m := optionsAttr.FindStringSubmatch(string(raw))
	require.Len(t, m, 2)
	erin := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin)
	reg, err := erin.Register([]byte(html.UnescapeString(m[1])))
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"invite": invite, "credential": json.RawMessage(reg)})
	require.NoError(t, err)
	post, out := r.post(t, "/enroll", body)
	require.Equal(t, http.StatusOK, post.StatusCode, string(out))

	again, out := r.post(t, "/enroll", body)
	assert.Equal(t, http.StatusForbidden, again.StatusCode, "an invite works once: %s", out)
	assert.Contains(t, string(out), gateway.CodeInvite)

	call := sendEmail("finance@example.com")
	call.Principal.User = "user:erin" // her own call: only she may approve it
	tk, err := r.client.Propose(ctx, call)
	require.NoError(t, err)
	opts, _ := r.pageOptions(t, tk.ID)
	assertion, err := erin.Assert(opts)
	require.NoError(t, err)
	ok, out := r.post(t, "/approve/"+string(tk.ID), assertion)
	require.Equal(t, http.StatusOK, ok.StatusCode, string(out))
	got, err := r.client.Wait(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

// TestCancelledPageSaysWhoCancelled: the link of a ticket its agent
// withdrew, over the agent API, says so in words, whatever reason the
// agent gave; the gate's own timeout reads as nobody deciding in time.
func TestCancelledPageSaysWhoCancelled(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	for _, reason := range []string{"", "cancelled by the agent before a decision", "Approved by security",
		"no decision", "<b>done</b>"} {
		tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		_, err = r.client.Cancel(ctx, tk.ID, reason)
		require.NoError(t, err)
		status, page := r.page(t, "/approve/"+string(tk.ID))
		assert.Equal(t, http.StatusConflict, status, reason)
		assert.Contains(t, page, "cancelled by the agent before a decision", reason)
		assert.NotContains(t, page, "<b>done</b>", "the agent's reason is not on the page")
		assert.NotContains(t, page, "Approved by security")
	}
	text, ok := gateway.VerdictOf(stepup.Ticket{Status: stepup.StatusCancelled,
		Reason: stepup.ReasonNoDecision + "; cancelled"})
	require.True(t, ok)
	assert.Contains(t, text, "Nobody decided this request in time")
}
