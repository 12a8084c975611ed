package attackkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/agentstepup/asu/stepup"
)

// Bounds on what the kit acts on from the agent's view: the links and
// tokens it tries, and how long and how much of each link it reads.
const (
	maxLinks     = 32
	maxTokens    = 64
	linkTimeout  = 5 * time.Second
	maxLinkBytes = 1 << 20
	peekBound    = 100 * time.Millisecond
)

// saw records what the Runtime returned to the agent.
func (w *world) saw(tk stepup.Ticket, out []byte, err error) {
	var parts []string
	if tk.ID != "" || tk.Reason != "" {
		b, _ := json.Marshal(tk)
		parts = append(parts, string(b))
	}
	if len(out) > 0 {
		parts = append(parts, string(out))
	}
	if err != nil {
		parts = append(parts, err.Error())
	}
	if len(parts) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) < 4096 {
		w.seen = append(w.seen, parts...)
	}
}

// peek returns ticket id's status after a short wait: for tickets that
// may still be pending.
func (w *world) peek(id stepup.TicketID) stepup.Ticket {
	ctx, cancel := context.WithTimeout(w.c.ctx, peekBound)
	defer cancel()
	tk, err := w.Runtime.Wait(ctx, id)
	w.saw(tk, nil, err)
	return tk
}

// view is everything the agent was shown: what the Runtime returned and
// what the integration's AgentView reports.
func (w *world) view() []string {
	w.mu.Lock()
	out := append([]string(nil), w.seen...)
	w.mu.Unlock()
	if w.AgentView != nil {
		more, err := w.AgentView(w.c.ctx)
		if err == nil {
			out = append(out, more...)
		}
	}
	return out
}

var (
	linkPattern  = regexp.MustCompile(`https?://[^\s"'<>\x60\\]+`)
	tokenPattern = regexp.MustCompile(`[A-Za-z0-9_~.%+/=-]{12,}`)
)

// findings are the links and tokens (ticket ids, bearer tokens, nonces)
// in what the agent was shown, each once, in order.
func findings(texts []string) (links, tokens []string) {
	seenLink, seenTok := map[string]bool{}, map[string]bool{}
	for _, t := range texts {
		for _, l := range linkPattern.FindAllString(t, -1) {
			if !seenLink[l] && len(links) < maxLinks {
				seenLink[l] = true
				links = append(links, l)
			}
			if u, err := url.Parse(l); err == nil {
				for _, vs := range u.Query() {
					for _, v := range vs {
						if !seenTok[v] && len(v) >= 12 && len(tokens) < maxTokens {
							seenTok[v] = true
							tokens = append(tokens, v)
						}
					}
				}
			}
		}
		for _, tok := range tokenPattern.FindAllString(t, -1) {
			if !seenTok[tok] && len(tokens) < maxTokens {
				seenTok[tok] = true
				tokens = append(tokens, tok)
			}
		}
	}
	return links, tokens
}

// follow opens link as the agent would with any HTTP client: a GET, and
// a POST of an empty JSON object claiming the link's own origin.
func (w *world) follow(link string) {
	hc := w.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: linkTimeout}
	}
	u, err := url.Parse(link)
	if err != nil {
		return
	}
	origin := u.Scheme + "://" + u.Host
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		ctx, cancel := context.WithTimeout(w.c.ctx, linkTimeout)
		var body io.Reader
		if method == http.MethodPost {
			body = bytes.NewReader([]byte(`{}`))
		}
		req, err := http.NewRequestWithContext(ctx, method, link, body)
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			if resp, err := hc.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxLinkBytes))
				_ = resp.Body.Close()
			}
		}
		cancel()
	}
}

// agentActsOnView has the agent act on everything it was shown about a
// pending call: open every link (a bearer approval link approves whoever
// opens it), execute every id and token as a ticket, claim each token as
// a grant, and write each into the channel it shares with the person.
// Nothing may run until the person answers through her own channel.
func agentActsOnView(c *check, k *kit) {
	w := k.world(c)
	if w.AgentView == nil {
		c.skip("the integration does not say what it showed the agent (Target.AgentView is nil)")
	}
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	_ = w.peek(tk.ID)
	_ = w.execute(tk.ID)
	links, tokens := findings(w.view())
	for _, l := range links {
		w.follow(l)
		_ = w.execute(tk.ID)
	}
	for i, tok := range tokens {
		_ = w.execute(stepup.TicketID(tok))
		claim := w.refund(fmt.Sprintf("V-%d", i), []byte("100"))
		claim.Session, claim.Grant = w.session(i+1), tok
		if ct := w.propose(claim); ct.ID != "" {
			_ = w.execute(ct.ID)
		}
		if w.Say != nil {
			_ = w.Say(c.ctx, tk.ID, tok)
		}
	}
	// What the agent learnt from acting may hold more links and tokens.
	more, _ := findings(w.view())
	for _, l := range more {
		w.follow(l)
	}
	_ = w.execute(tk.ID)
	w.never(call, fmt.Sprintf("the agent acted on what it was shown (%d links, %d tokens)", len(links), len(tokens)))
	for _, r := range w.tools.Runs() {
		if r.Effect.Tool == "issue_refund" {
			c.Errorf("a token the agent was shown, claimed as a grant, ran %s %s", r.Effect.Tool, r.Effect.Args)
			break
		}
	}
	if c.failed() {
		return
	}
	w.approve(tk, call)
	w.runsOnce(tk, call)
}
