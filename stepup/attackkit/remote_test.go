package attackkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// overHTTP is asu as a service: a framework loop holding the remote client
// of the gateway's agent API, and people answering on the gateway's
// approval site, each on its own test server.
func overHTTP(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	h, change := versionedHarness(t, tools)
	const token = "kit-runtime-token-0123456789abcdefghijklmnop"
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
		{Token: token, Agent: attackkit.Agent, Users: []string{attackkit.User, attackkit.Stranger}}}, nil)
	require.NoError(t, err)
	apiSrv := httptest.NewServer(api)
	t.Cleanup(apiSrv.Close)
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), nil)
	require.NoError(t, err)
	siteSrv := httptest.NewServer(site)
	t.Cleanup(siteSrv.Close)
	client, err := remote.NewClient(apiSrv.URL, token, apiSrv.Client())
	require.NoError(t, err)
	people := &siteApprover{Desk: desk(h), url: siteSrv.URL, hc: siteSrv.Client(), answers: map[stepup.TicketID][]byte{}}
	tg := newLoop(client).target(people, advance(h))
	tg.ChangePolicy = change
	return tg
}

// service is asu running as a service of its own, as a framework author
// meets it: the agent API and the approval site on their own servers, the
// operator's invites and policy deploys, and the tools run by the service.
// The kit reaches it only over HTTP, through attackkit.Remote.
func service(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	h, change := versionedHarness(t, tools)
	const token = "kit-service-token-0123456789abcdefghijklmnop"
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
		{Token: token, Agent: attackkit.Agent, Users: []string{attackkit.User, attackkit.Stranger}}}, nil)
	require.NoError(t, err)
	apiSrv := httptest.NewServer(api)
	t.Cleanup(apiSrv.Close)
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), nil)
	require.NoError(t, err)
	siteSrv := httptest.NewServer(site)
	t.Cleanup(siteSrv.Close)
	tg, err := attackkit.Remote(attackkit.RemoteConfig{
		AgentURL: apiSrv.URL, Token: token,
		Site: attackkit.SiteConfig{URL: siteSrv.URL, RPID: stepuptest.RP().ID, Origin: stepuptest.RP().Origin,
			Invite: h.Enrollment.Invite},
		ChangePolicy: change, Advance: advance(h),
	})
	require.NoError(t, err)
	return tg
}

// TestRemoteService runs the catalogue against asu as a service reached
// only over HTTP: nothing breaks, and the attacks that need what only an
// in-process integration offers (its card, its hooks) are skipped with
// their reason.
func TestRemoteService(t *testing.T) {
	rep := attackkit.Run(t, service)
	assert.Empty(t, rep.Broken())
	for _, name := range []string{"agent acts on what it was shown", "denied call asked again",
		"approval runs under a changed policy", "replay of an approver's answer", "expired approval",
		"requester approves its own call", "flood of one session", "revoked approval"} {
		r, ok := rep.Result(name)
		require.True(t, ok, name)
		assert.Equal(t, attackkit.Held, r.Outcome, "%s: %s", name, r.Detail)
	}
}

func TestRemoteClient(t *testing.T) {
	rep := attackkit.Run(t, overHTTP)
	assertAllHeld(t, rep)
}

// siteApprover answers on the approval site as a browser would: it opens
// the ticket's page, signs the options the page carries with the person's
// passkey and posts the answer from the site's origin. Viewing, revoking,
// grants and receipts go through the desk the site serves.
type siteApprover struct {
	*attackkit.Desk
	url string
	hc  *http.Client

	mu      sync.Mutex
	answers map[stepup.TicketID][]byte
}

var pageOptions = regexp.MustCompile(`data-(approve|deny)="([^"]*)"`)

// options returns the approve or deny request options of ticket id's page.
func (s *siteApprover) options(ctx context.Context, id stepup.TicketID, which string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gateway.ApprovalLink(s.url, id), nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("approval page: %s", resp.Status)
	}
	for _, m := range pageOptions.FindAllStringSubmatch(string(body), -1) {
		if m[1] == which {
			return []byte(html.UnescapeString(m[2])), nil
		}
	}
	return nil, fmt.Errorf("approval page has no %s options", which)
}

// post sends body to the site from its own origin.
func (s *siteApprover) post(ctx context.Context, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", stepuptest.RP().Origin)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return nil
}

func (s *siteApprover) Approve(ctx context.Context, id stepup.TicketID, who string) error {
	a, err := s.Person(ctx, who)
	if err != nil {
		return err
	}
	opts, err := s.options(ctx, id, "approve")
	if err != nil {
		return err
	}
	answer, err := a.Assert(opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.answers[id] = answer
	s.mu.Unlock()
	return s.post(ctx, "/approve/"+string(id), answer)
}

func (s *siteApprover) Deny(ctx context.Context, id stepup.TicketID, who string) error {
	a, err := s.Person(ctx, who)
	if err != nil {
		return err
	}
	opts, err := s.options(ctx, id, "deny")
	if err != nil {
		return err
	}
	answer, err := a.Assert(opts)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"credential": json.RawMessage(answer), "reason": "not what I asked for"})
	if err != nil {
		return err
	}
	return s.post(ctx, "/approve/"+string(id)+"/deny", body)
}

// Replay posts the answer captured for ticket from as the answer for to.
func (s *siteApprover) Replay(ctx context.Context, from, to stepup.TicketID) error {
	s.mu.Lock()
	answer := s.answers[from]
	s.mu.Unlock()
	if answer == nil {
		return fmt.Errorf("no answer was given for ticket %s", from)
	}
	return s.post(ctx, "/approve/"+string(to), answer)
}
