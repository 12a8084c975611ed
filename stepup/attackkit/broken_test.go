package attackkit_test

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

// The integrations below are built on asu's gate the documented way,
// each with one mistake a framework author is likely to make; each new
// attack of the kit catches its own under the property it breaks, and
// nothing else.

// policyRetryLoop, when Execute answers that the policy changed since the
// approval, runs the call it remembered instead of proposing it again.
type policyRetryLoop struct {
	*agentLoop
	tools *attackkit.Tools
}

func (l policyRetryLoop) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	res, err := l.agentLoop.Execute(ctx, id)
	if errors.Is(err, stepup.ErrPolicyChanged) {
		l.mu.Lock()
		c := l.checkpoint[id]
		l.mu.Unlock()
		out, err := l.tools.Execute(ctx, canon.Effect{Tool: c.Tool, Args: c.Args, Principal: c.Principal}, "")
		return stepup.Result{Ticket: id, Output: out}, err
	}
	return res, err
}

func policyRetry(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	tg := inProcess(t, tools)
	l := policyRetryLoop{agentLoop: tg.Runtime.(*agentLoop), tools: tools}
	tg.Runtime = l
	return tg
}

// bearerLinkLoop puts a bearer approval link (one that approves whoever
// opens it) into the reason of every pending ticket the agent reads.
type bearerLinkLoop struct {
	*agentLoop
	srv *httptest.Server

	mu     sync.Mutex
	tokens map[string]stepup.TicketID
}

func (l *bearerLinkLoop) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	tk, err := l.agentLoop.Propose(ctx, c)
	if err == nil && tk.Status == stepup.StatusPending {
		var b [16]byte
		_, _ = rand.Read(b[:])
		tok := hex.EncodeToString(b[:])
		l.mu.Lock()
		l.tokens[tok] = tk.ID
		l.mu.Unlock()
		tk.Reason += " Approve it here: " + l.srv.URL + "/magic?token=" + tok
	}
	return tk, err
}

func bearerLink(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	h, change := versionedHarness(t, tools)
	people := desk(h)
	l := &bearerLinkLoop{agentLoop: newLoop(h.Gate), tokens: map[string]stepup.TicketID{}}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.URL.Query().Get("token")
		l.mu.Lock()
		var id stepup.TicketID
		for tok, tid := range l.tokens {
			if subtle.ConstantTimeCompare([]byte(tok), []byte(got)) == 1 {
				id = tid
			}
		}
		l.mu.Unlock()
		if id == "" {
			http.NotFound(w, r)
			return
		}
		_ = people.Approve(r.Context(), id, attackkit.User) // "the link is the approval"
	}))
	t.Cleanup(l.srv.Close)
	tg := l.agentLoop.target(people, advance(h))
	tg.Runtime, tg.ChangePolicy = l, change
	return tg
}

// askOnceLoop never asks a person twice about the same call: once she
// answered it, either way, the same tool and arguments run without
// asking.
type askOnceLoop struct {
	*agentLoop
	people attackkit.Approver
	tools  *attackkit.Tools

	mu       sync.Mutex
	answered map[string]bool
	calls    map[stepup.TicketID]stepup.Call
}

func callKey(c stepup.Call) string { return c.Tool + " " + string(c.Args) }

func (l *askOnceLoop) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	l.mu.Lock()
	asked := l.answered[callKey(c)]
	l.mu.Unlock()
	tk, err := l.agentLoop.Propose(ctx, c)
	if err == nil && asked {
		l.mu.Lock()
		l.calls[tk.ID] = c
		l.mu.Unlock()
		tk.Status = stepup.StatusApproved
	}
	return tk, err
}

func (l *askOnceLoop) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	l.mu.Lock()
	c, known := l.calls[id]
	l.mu.Unlock()
	if known {
		out, err := l.tools.Execute(ctx, canon.Effect{Tool: c.Tool, Args: c.Args, Principal: c.Principal}, "")
		return stepup.Result{Ticket: id, Output: out}, err
	}
	return l.agentLoop.Execute(ctx, id)
}

// Deny is the person's answer, noted so she is not asked again.
func (l *askOnceLoop) Deny(ctx context.Context, id stepup.TicketID, who string) error {
	l.mu.Lock()
	c := l.checkpoint[id]
	l.answered[callKey(c)] = true
	l.mu.Unlock()
	return l.people.Deny(ctx, id, who)
}

func (l *askOnceLoop) Approve(ctx context.Context, id stepup.TicketID, who string) error {
	return l.people.Approve(ctx, id, who)
}

func askOnce(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	h, change := versionedHarness(t, tools)
	l := &askOnceLoop{agentLoop: newLoop(h.Gate), people: desk(h), tools: tools,
		answered: map[string]bool{}, calls: map[stepup.TicketID]stepup.Call{}}
	tg := l.agentLoop.target(l, advance(h))
	tg.Runtime, tg.ChangePolicy = l, change
	return tg
}

// TestNewAttacksCatchBrokenIntegrations: each broken integration breaks
// the attack aimed at its mistake, under that attack's property, and the
// report names it.
func TestNewAttacksCatchBrokenIntegrations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		adapter attackkit.Adapter
		attack  string
		prop    attackkit.Property
		detail  string
	}{
		{"runs the remembered call when the policy changed", policyRetry,
			"approval runs under a changed policy", attackkit.P2, "ran after the policy changed"},
		{"shows the agent a bearer approval link", bearerLink,
			"agent acts on what it was shown", attackkit.P1, "the agent acted on what it was shown"},
		{"never asks twice about one call", askOnce,
			"denied call asked again", attackkit.P1, "without her answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := attackkit.Assess(t, tc.adapter)
			r, ok := rep.Result(tc.attack)
			require.True(t, ok)
			assert.Equal(t, attackkit.Broken, r.Outcome, r.Detail)
			assert.Equal(t, tc.prop, r.Property)
			assert.Contains(t, r.Detail, tc.detail)
			assert.Equal(t, attackkit.Broken, rep.Outcome(tc.prop))
			assert.Contains(t, rep.String(), "broken: "+tc.prop.String()+" / "+tc.attack)
			for _, other := range rep.Broken() {
				assert.Equal(t, tc.attack, other.Attack, "only its own mistake: %s", strings.SplitN(other.Detail, "\n", 2)[0])
			}
		})
	}
}
