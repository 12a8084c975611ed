package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// quorumSite is an approval site over a gate whose refunds need two of
// finance (Dana, Erin, Finn); Gus is enrolled but in no group.
type quorumSite struct {
	*stepuptest.Harness
	srv             *httptest.Server
	erin, finn, gus *stepuptest.Authenticator
}

func newQuorumSite(t *testing.T, opts ...gate.Option) *quorumSite {
	t.Helper()
	cat, err := policy.NewCatalog("v1", policy.Tool{Name: "issue_refund", Title: "Issue a refund",
		Class: card.ClassIrreversible, Approvers: "finance", Quorum: 2})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat, append([]gate.Option{gate.WithApproverGroup("finance", stepuptest.Approver, "user:erin", "user:finn"),
		gate.WithExecutor("issue_refund", &recorder{})}, opts...)...)
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), &gateway.SiteOptions{Tickets: h.Gate})
	require.NoError(t, err)
	q := &quorumSite{Harness: h, srv: httptest.NewServer(site)}
	t.Cleanup(q.srv.Close)
	q.erin, q.finn, q.gus = h.Enroll(t, "user:erin"), h.Enroll(t, "user:finn"), h.Enroll(t, "user:gus")
	return q
}

func (q *quorumSite) refund(t *testing.T) stepup.TicketID {
	t.Helper()
	tk, err := q.Gate.Propose(context.Background(), stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"o-7","amount":40}`),
		Session: "s", Principal: canon.Principal{User: "user:ivy", Agent: "agent:billing"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	return tk.ID
}

func (q *quorumSite) post(t *testing.T, path string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, q.srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", stepuptest.RP().Origin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return resp.StatusCode, out
}

// approve signs ticket id's challenge with a (naming its credential, so
// even a passkey that may not decide answers) and posts it.
func (q *quorumSite) approve(t *testing.T, a *stepuptest.Authenticator, id stepup.TicketID) (int, map[string]any) {
	t.Helper()
	p, err := q.Gate.Desk().Prompt(context.Background(), id)
	require.NoError(t, err)
	require.NoError(t, q.Gate.Desk().Show(context.Background(), id))
	answer, err := a.Assert(p.Options, stepuptest.WithCredential(a.CredentialIDs()[0]))
	require.NoError(t, err)
	return q.post(t, "/approve/"+string(id), answer)
}

func refusalCode(out map[string]any) (code, message string) {
	e, _ := out["error"].(map[string]any)
	code, _ = e["code"].(string)
	message, _ = e["message"].(string)
	return code, message
}

// TestSiteWordsTheRuleOfTwo: Dana's approval of a refund that needs two
// people is answered with where it stands (1 of 2, awaiting finance),
// never that the agent may run it; her page and Erin's say the same and
// name who is awaited; Dana again is told she already approved; Erin's
// approval is answered that the action may run.
func TestSiteWordsTheRuleOfTwo(t *testing.T) {
	q := newQuorumSite(t)
	id := q.refund(t)
	const progress = "1 of 2 approved by user:dana; waiting for one more of finance"

	status, out := q.approve(t, q.Authenticator, id)
	require.Equal(t, http.StatusOK, status, out)
	assert.Equal(t, "pending", out["status"])
	assert.Equal(t, progress, out["progress"])
	assert.Contains(t, out["message"], progress)
	assert.NotContains(t, out["message"], "may now run")

	_, page := getPage(t, q.srv.URL, id)
	assert.Contains(t, page, progress+".")
	assert.Contains(t, page, "May approve: <strong>user:erin</strong>, <strong>user:finn</strong>.")

	status, out = q.approve(t, q.Authenticator, id)
	assert.Equal(t, http.StatusConflict, status)
	code, msg := refusalCode(out)
	assert.Equal(t, gateway.CodeAlreadyApproved, code)
	assert.Contains(t, msg, "You already approved this request")

	status, out = q.approve(t, q.erin, id)
	require.Equal(t, http.StatusOK, status, out)
	assert.Equal(t, "approved", out["status"])
	assert.Equal(t, "Approved. The agent may now run exactly this action, once.", out["message"])
	assert.Equal(t, "2 of 2 approved by user:dana, user:erin", out["progress"])
}

// TestSiteRefusalCausesHaveTheirOwnCodes: a verified answer that may not
// decide is refused with the code and words of its cause.
func TestSiteRefusalCausesHaveTheirOwnCodes(t *testing.T) {
	q := newQuorumSite(t)
	id := q.refund(t)
	status, out := q.approve(t, q.gus, id)
	assert.Equal(t, http.StatusForbidden, status)
	code, msg := refusalCode(out)
	assert.Equal(t, gateway.CodeNotYours, code)
	assert.Contains(t, msg, "may not decide this request")

	require.NoError(t, q.Enrollment.RevokeCredential(context.Background(), q.finn.CredentialIDs()[0], "user:ops", "lost"))
	status, out = q.approve(t, q.finn, id)
	assert.Equal(t, http.StatusForbidden, status)
	code, msg = refusalCode(out)
	assert.Equal(t, gateway.CodePasskeyRevoked, code)
	assert.Contains(t, msg, "This passkey was revoked")
}

// TestShownAnswersTheDwell: the "shown" post answers the gate's dwell for
// the ticket's class and how long until an approval from this screen is
// acceptable, the same whether or not the card was shown before; an
// approval that waited that long is accepted.
func TestShownAnswersTheDwell(t *testing.T) {
	for _, dwell := range []time.Duration{0, gate.DefaultDwell, 10 * time.Second} {
		for _, before := range []time.Duration{-1, 0, time.Second, 9 * time.Second} {
			q := newQuorumSite(t, gate.WithDwell(dwell))
			id := q.refund(t)
			if before >= 0 {
				require.NoError(t, q.Gate.Desk().Show(context.Background(), id))
				q.Clock.Advance(before)
			}
			status, out := q.post(t, "/approve/"+string(id)+"/shown", pageView(t, q.srv.URL, id))
			require.Equal(t, http.StatusOK, status, out)
			assert.Equal(t, float64(dwell.Milliseconds()), out["dwell_ms"], "dwell %v, shown %v before", dwell, before)
			assert.Equal(t, float64(dwell.Milliseconds()), out["acceptable_in_ms"], "dwell %v, shown %v before", dwell, before)
			q.Clock.Advance(dwell)
			p, err := q.Gate.Desk().Prompt(context.Background(), id)
			require.NoError(t, err)
			answer, err := q.Authenticator.Assert(p.Options)
			require.NoError(t, err)
			status, out = q.post(t, "/approve/"+string(id), answer)
			assert.Equal(t, http.StatusOK, status, out)
		}
	}
}

func getPage(t *testing.T, base string, id stepup.TicketID) (int, string) {
	t.Helper()
	resp, err := http.Get(gateway.ApprovalLink(base, id))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestApprovedPageGoesBackToPendingWhenItsVotesLapse: a refund approved by
// Dana and Erin, whose passkey is then revoked, does not run: it is back
// to pending, its page says 1 of 2 and offers it to be approved again,
// instead of showing it approved.
func TestApprovedPageGoesBackToPendingWhenItsVotesLapse(t *testing.T) {
	q := newQuorumSite(t)
	id := q.refund(t)
	status, out := q.approve(t, q.Authenticator, id)
	require.Equal(t, http.StatusOK, status, out)
	status, out = q.approve(t, q.erin, id)
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "approved", out["status"])
	_, page := getPage(t, q.srv.URL, id)
	assert.Contains(t, page, "2 of 2 approved by user:dana, user:erin.")
	assert.NotContains(t, page, "no longer holds")

	require.NoError(t, q.Enrollment.RevokeCredential(context.Background(), q.erin.CredentialIDs()[0], "user:ops", "lost"))
	_, page = getPage(t, q.srv.URL, id)
	assert.Contains(t, page, "1 of 2 approved by user:dana; waiting for one more of finance.",
		"the ticket is back to pending: erin's approval no longer counts")
	assert.Contains(t, page, `id="asu-approve"`, "and may be approved again")
	_, err := q.Gate.Execute(context.Background(), id)
	assert.ErrorIs(t, err, stepup.ErrNotApproved, "and it does not run")
}
