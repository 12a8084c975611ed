package attackkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// SiteConfig points [NewSite] at an approval site, such as the one
// examples/gateway serves.
type SiteConfig struct {
	// URL is the site's base URL as approvers reach it. Required.
	URL string
	// RPID is the relying party id of the site's passkeys (default: the
	// URL's host name).
	RPID string
	// Origin is the origin the site's passkeys are made for (default:
	// URL's scheme and host).
	Origin string
	// Invite mints a one-time enrollment invite for a person, as the
	// operator does ("examples/gateway invite -user ..."). Required: the
	// kit's people enroll through the site with it.
	Invite func(ctx context.Context, who string) (string, error)
	// HTTPClient reaches the site (default: a client with a 10 s timeout).
	HTTPClient *http.Client
}

// Site is the [Approver] of an approval site reached over HTTP: each
// person enrolls through the site's own enrollment page with an invite
// and a fake passkey (package stepuptest), and answers on the ticket's
// approval page as a browser would, from the site's origin. It also
// implements [Revoker] (the page's revoke offer, signed with the same
// passkey) and [Replayer]. It is safe for concurrent use.
type Site struct {
	cfg SiteConfig
	hc  *http.Client

	mu      sync.Mutex
	people  map[string]*stepuptest.Authenticator
	answers map[stepup.TicketID][]byte
}

var (
	_ Replayer = (*Site)(nil)
	_ Revoker  = (*Site)(nil)
)

// NewSite returns the people of the approval site cfg names.
func NewSite(cfg SiteConfig) (*Site, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("attackkit: SiteConfig.URL is not an http(s) URL")
	}
	if cfg.Invite == nil {
		return nil, errors.New("attackkit: SiteConfig.Invite is required")
	}
	cfg.URL = strings.TrimSuffix(cfg.URL, "/")
	if cfg.RPID == "" {
		cfg.RPID = u.Hostname()
	}
	if cfg.Origin == "" {
		cfg.Origin = u.Scheme + "://" + u.Host
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Site{cfg: cfg, hc: hc, people: map[string]*stepuptest.Authenticator{},
		answers: map[stepup.TicketID][]byte{}}, nil
}

var (
	pageAnswerOptions = regexp.MustCompile(`data-(approve|deny|revoke)="([^"]*)"`)
	pageEnrollOptions = regexp.MustCompile(`data-options="([^"]*)"`)
)

// page returns the body of GET path on the site.
func (s *Site) page(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLinkBytes))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("attackkit: %s: %s", path, resp.Status)
	}
	return string(body), nil
}

// post sends body to path from the site's own origin.
func (s *Site) post(ctx context.Context, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", s.cfg.Origin)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxLinkBytes))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("attackkit: %s: %s", path, resp.Status)
	}
	return nil
}

// Person returns who's fake passkey, enrolling it through the site's
// enrollment page with an invite on first use.
func (s *Site) Person(ctx context.Context, who string) (*stepuptest.Authenticator, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.people[who]; ok {
		return a, nil
	}
	token, err := s.cfg.Invite(ctx, who)
	if err != nil {
		return nil, err
	}
	body, err := s.page(ctx, "/enroll?invite="+url.QueryEscape(token))
	if err != nil {
		return nil, err
	}
	m := pageEnrollOptions.FindStringSubmatch(body)
	if m == nil {
		return nil, errors.New("attackkit: the enrollment page has no passkey options")
	}
	a := stepuptest.NewAuthenticator(s.cfg.RPID, s.cfg.Origin)
	reg, err := a.Register([]byte(html.UnescapeString(m[1])))
	if err != nil {
		return nil, err
	}
	enroll, err := json.Marshal(map[string]any{"invite": token, "credential": json.RawMessage(reg)})
	if err != nil {
		return nil, err
	}
	if err := s.post(ctx, "/enroll", enroll); err != nil {
		return nil, err
	}
	s.people[who] = a
	return a, nil
}

// answer signs the approve or deny options of ticket id's page as who.
func (s *Site) answer(ctx context.Context, id stepup.TicketID, who, which string) ([]byte, error) {
	a, err := s.Person(ctx, who)
	if err != nil {
		return nil, err
	}
	body, err := s.page(ctx, "/approve/"+url.PathEscape(string(id)))
	if err != nil {
		return nil, err
	}
	for _, m := range pageAnswerOptions.FindAllStringSubmatch(body, -1) {
		if m[1] == which {
			return a.Assert([]byte(html.UnescapeString(m[2])))
		}
	}
	return nil, fmt.Errorf("attackkit: the approval page has no %s options", which)
}

// Approve answers ticket id's approval page as who.
func (s *Site) Approve(ctx context.Context, id stepup.TicketID, who string) error {
	answer, err := s.answer(ctx, id, who, "approve")
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.answers[id] = answer
	s.mu.Unlock()
	return s.post(ctx, "/approve/"+url.PathEscape(string(id)), answer)
}

// Deny refuses ticket id on its approval page as who.
func (s *Site) Deny(ctx context.Context, id stepup.TicketID, who string) error {
	answer, err := s.answer(ctx, id, who, "deny")
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"credential": json.RawMessage(answer), "reason": "not what I asked for"})
	if err != nil {
		return err
	}
	return s.post(ctx, "/approve/"+url.PathEscape(string(id))+"/deny", body)
}

// Revoke revokes ticket id's approval on its page as who.
func (s *Site) Revoke(ctx context.Context, id stepup.TicketID, who string) error {
	answer, err := s.answer(ctx, id, who, "revoke")
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"credential": json.RawMessage(answer), "reason": "changed my mind"})
	if err != nil {
		return err
	}
	return s.post(ctx, "/approve/"+url.PathEscape(string(id))+"/revoke", body)
}

// Replay posts the answer given for ticket from as the answer for to.
func (s *Site) Replay(ctx context.Context, from, to stepup.TicketID) error {
	s.mu.Lock()
	answer := s.answers[from]
	s.mu.Unlock()
	if answer == nil {
		return fmt.Errorf("attackkit: no answer was given for ticket %s", from)
	}
	return s.post(ctx, "/approve/"+url.PathEscape(string(to)), answer)
}

// RemoteConfig points [Remote] at a running asu service: its agent API,
// a runtime token that acts for [User] and [Stranger] as [Agent], and its
// approval site.
type RemoteConfig struct {
	// AgentURL is the agent API's base URL. Required.
	AgentURL string
	// Token is a runtime token of the service for [Agent], acting for
	// [User] and [Stranger]. Required.
	Token string
	// Site is the approval site.
	Site SiteConfig
	// HTTPClient reaches the agent API (default: the client's own).
	HTTPClient *http.Client
	// ChangePolicy and Advance, when the service's operator can do them
	// from the test (deploy a new catalog, move the clock), enable the
	// attacks that need them; see [Target].
	ChangePolicy func(ctx context.Context) error
	Advance      func(d time.Duration)
}

// Remote returns the target of a running service: the kit is the agent,
// driving the service's agent API with the remote client, and the people
// answer on its approval site with fake passkeys. The service must route
// send_email and issue_refund to a person and run them through the kit's
// [Tools] (an executor of the service that calls Tools.Execute, or that
// posts to [Tools.ServeHTTP]); what the agent was shown is what the agent
// API returned, which the kit records itself.
func Remote(cfg RemoteConfig) (Target, error) {
	client, err := remote.NewClient(cfg.AgentURL, cfg.Token, cfg.HTTPClient)
	if err != nil {
		return Target{}, err
	}
	people, err := NewSite(cfg.Site)
	if err != nil {
		return Target{}, err
	}
	return Target{Runtime: client, People: people, ChangePolicy: cfg.ChangePolicy, Advance: cfg.Advance,
		AgentView: func(context.Context) ([]string, error) { return nil, nil }}, nil
}
