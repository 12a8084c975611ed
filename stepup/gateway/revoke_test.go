package gateway_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

var revokeAttr = regexp.MustCompile(`data-revoke="([^"]*)"`)

// revokeOptions opens the link of approved ticket id and returns the
// request options its revoke button signs.
func (r *rig) revokeOptions(t *testing.T, id stepup.TicketID) []byte {
	t.Helper()
	status, body := r.page(t, "/approve/"+string(id))
	require.Equal(t, http.StatusOK, status, body)
	m := revokeAttr.FindStringSubmatch(body)
	require.Len(t, m, 2, "the page of an approved ticket offers to revoke it")
	return []byte(html.UnescapeString(m[1]))
}

// postRevoke posts a revocation of id signed with credential.
func (r *rig) postRevoke(t *testing.T, id stepup.TicketID, credential []byte, reason string) (int, string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"credential": json.RawMessage(credential), "reason": reason})
	require.NoError(t, err)
	resp, out := r.post(t, "/approve/"+string(id)+"/revoke", body)
	return resp.StatusCode, string(out)
}

// TestRevokeFromTheApprovalLink: the link of an approved ticket offers to
// revoke it, names who may, and the approver's passkey over the ticket's
// deny challenge revokes it; the runtime then sees it revoked and Execute
// refuses with ErrRevoked. Every other answer is refused and leaves the
// ticket approved.
func TestRevokeFromTheApprovalLink(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	other, err := r.client.Propose(ctx, sendEmail("finance@example.org"))
	require.NoError(t, err)
	approveOpts, _ := r.pageOptions(t, tk.ID)
	_, otherDeny := r.pageOptions(t, other.ID)
	r.approveOverHTTP(t, tk.ID)

	_, page := r.page(t, "/approve/"+string(tk.ID))
	assert.Contains(t, page, "May revoke: <strong>user:dana</strong>")
	assert.NotRegexp(t, inlineScript, page, "no inline script, handler or style")
	revokeOpts := r.revokeOptions(t, tk.ID)

	erin := r.Enroll(t, "user:erin")
	sign := func(a *stepuptest.Authenticator, opts []byte) []byte {
		s, err := a.Assert(opts, stepuptest.WithCredential(a.CredentialIDs()[0]))
		require.NoError(t, err)
		return s
	}
	refused := []struct {
		name       string
		credential []byte
		reason     string
	}{
		{"no assertion", []byte(`{}`), ""},
		{"the approve assertion", sign(r.Authenticator, approveOpts), ""},
		{"another ticket's deny assertion", sign(r.Authenticator, otherDeny), ""},
		{"an enrolled person who may not decide it", sign(erin, revokeOpts), ""},
		{"a control character in the reason", sign(r.Authenticator, revokeOpts), "oops\u202e"},
	}
	for _, tt := range refused {
		status, body := r.postRevoke(t, tk.ID, tt.credential, tt.reason)
		assert.NotEqual(t, http.StatusOK, status, "%s: %s", tt.name, body)
	}
	got, err := r.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status, "no refused answer revoked the ticket")

	status, body := r.postRevoke(t, tk.ID, sign(r.Authenticator, revokeOpts), "sent to the wrong list")
	require.Equal(t, http.StatusOK, status, body)
	got, err = r.client.Wait(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusRevoked, got.Status)
	_, err = r.client.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrRevoked)
	assert.Zero(t, r.exec.count(), "a revoked approval never runs")

	status, page = r.page(t, "/approve/"+string(tk.ID))
	assert.Equal(t, http.StatusGone, status)
	assert.Contains(t, page, "This approval was revoked. It will never run.")
	assert.NotContains(t, page, "data-revoke")
}

// TestDecidedPagesSayWhatHappened: the link of a ticket that can no longer
// be decided says, in words, what became of it, for every way a ticket
// leaves pending; only an approval that has not run offers to revoke.
func TestDecidedPagesSayWhatHappened(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		setup  func(t *testing.T, r *rig) stepup.TicketID
		status int
		text   string
		revoke bool
	}{
		{"approved", func(t *testing.T, r *rig) stepup.TicketID {
			tk := r.proposeEmail(t)
			r.approveOverHTTP(t, tk)
			return tk
		}, http.StatusOK, "has not run", true},
		{"executed", func(t *testing.T, r *rig) stepup.TicketID {
			tk := r.proposeEmail(t)
			r.approveOverHTTP(t, tk)
			_, err := r.client.Execute(ctx, tk)
			require.NoError(t, err)
			return tk
		}, http.StatusConflict, "has run. It never runs again.", false},
		{"denied", func(t *testing.T, r *rig) stepup.TicketID {
			tk := r.proposeEmail(t)
			_, err := r.Deny(tk, "no")
			require.NoError(t, err)
			return tk
		}, http.StatusConflict, "This request was denied.", false},
		{"expired while pending", func(t *testing.T, r *rig) stepup.TicketID {
			tk := r.proposeEmail(t)
			r.Clock.Advance(16 * 60e9)
			return tk
		}, http.StatusGone, "expired before anyone decided it", false},
		{"expired while pending, timed out by a sweep", func(t *testing.T, r *rig) stepup.TicketID {
			tk := r.proposeEmail(t)
			r.Clock.Advance(16 * 60e9)
			_, err := r.Gate.Sweep(ctx)
			require.NoError(t, err)
			return tk
		}, http.StatusGone, "expired before anyone decided it", false},
		{"approved, then expired unused", func(t *testing.T, r *rig) stepup.TicketID {
			tk := r.proposeEmail(t)
			r.approveOverHTTP(t, tk)
			r.Clock.Advance(16 * 60e9)
			return tk
		}, http.StatusGone, "expired", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			id := tt.setup(t, r)
			status, page := r.page(t, "/approve/"+string(id))
			assert.Equal(t, tt.status, status, page)
			assert.Contains(t, page, tt.text)
			assert.Equal(t, tt.revoke, revokeAttr.MatchString(page))
			assert.NotContains(t, page, "already decided.", "the page says what happened, not only that it did")
		})
	}
}

// TestApprovalPageNamesApprovers: the page says who may approve, and
// before anyone who may has a passkey it says so instead of failing in the
// browser.
func TestApprovalPageNamesApprovers(t *testing.T) {
	r := newRig(t, nil)
	tk := r.proposeEmail(t)
	status, page := r.page(t, "/approve/"+string(tk))
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, page, "May approve: <strong>user:dana</strong>.")

	c := sendEmail("finance@example.com")
	c.Principal.User = "user:erin" // nobody enrolled a passkey for erin
	erinTk, err := r.client.Propose(context.Background(), c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, erinTk.Status)
	status, page = r.page(t, "/approve/"+string(erinTk.ID))
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, page, "Nobody who may approve this request has a passkey enrolled here yet")
	assert.NotContains(t, page, "data-approve")

	r.Enroll(t, "user:erin")
	status, page = r.page(t, "/approve/"+string(erinTk.ID))
	assert.Equal(t, http.StatusOK, status, "once erin enrolled, the same link works")
	assert.Contains(t, page, "May approve: <strong>user:erin</strong>.")
}

// proposeEmail proposes a send_email that needs approval and returns its id.
func (r *rig) proposeEmail(t *testing.T) stepup.TicketID {
	t.Helper()
	tk, err := r.client.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	return tk.ID
}
