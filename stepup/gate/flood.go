package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Flood admits the calls that would prompt a person and learns how people
// decided them; *flood.Limiter is the default. Admit refuses with a
// *flood.LimitError (rate limited or locked out, with a retry time) or
// any other error, which the gate treats as a refusal.
type Flood interface {
	Admit(ctx context.Context, r flood.Request) error
	Decided(ctx context.Context, r flood.Request, approved bool) error
	// Caps bounds the live pending tickets per session and per user,
	// enforced by the store when it parks a ticket.
	Caps() store.Caps
}

// WithFlood sets the flood control of approval requests. Without it the
// gate uses flood's default limits over the store's counters; to run
// without any, say so with [WithoutFloodControlUnsafe].
func WithFlood(f Flood) Option {
	return func(g *Gate) error {
		if f == nil {
			return fmt.Errorf("%w: nil flood control; use WithoutFloodControlUnsafe to turn it off", stepup.ErrConfig)
		}
		if g.floodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.flood, g.floodSet = f, true
		return nil
	}
}

// WithoutFloodControlUnsafe turns flood control off: an agent may then
// prompt people as often as it likes, which is how approval fatigue is
// made. For tests and demos.
func WithoutFloodControlUnsafe() Option {
	return func(g *Gate) error {
		if g.floodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.flood, g.floodSet = nil, true
		return nil
	}
}

// parkCaps is the stricter of the gate's caps and flood control's.
func (g *Gate) parkCaps() store.Caps {
	if g.flood == nil {
		return g.caps
	}
	lc := g.flood.Caps()
	return store.Caps{PerSession: stricter(g.caps.PerSession, lc.PerSession),
		PerUser: stricter(g.caps.PerUser, lc.PerUser)}
}

func stricter(a, b int) int {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// floodRequest is who a ticket's prompt comes from and goes to.
func floodRequest(a store.Approval, approvers []string) flood.Request {
	return flood.Request{User: a.User, Agent: a.Requester.Agent, Session: a.Session, Approvers: approvers}
}

// admit asks flood control whether a call may prompt approvers. It returns
// the refusal's reason (empty when admitted) and when to retry.
func (g *Gate) admit(ctx context.Context, r flood.Request) (string, time.Duration) {
	if g.flood == nil {
		return "", 0
	}
	err := g.flood.Admit(ctx, r)
	if err == nil {
		return "", 0
	}
	var le *flood.LimitError
	if !errors.As(err, &le) {
		return "approval requests cannot be admitted now; try again later", 0
	}
	retry := le.RetryAfter.Round(time.Second)
	if retry < le.RetryAfter {
		retry += time.Second
	}
	whose := map[flood.Scope]string{flood.ScopeSession: "this session", flood.ScopeAgent: "this agent",
		flood.ScopeUser: "this user", flood.ScopeApprover: "an approver"}[le.Scope]
	if whose == "" {
		whose = "this session"
	}
	if errors.Is(err, flood.ErrLockedOut) {
		return fmt.Sprintf("locked out: approvers denied too many requests of %s in a row; retry after %v", whose, retry), retry
	}
	if le.Scope == flood.ScopeApprover {
		return fmt.Sprintf("rate limited: %s has received too many requests; retry after %v", whose, retry), retry
	}
	return fmt.Sprintf("rate limited: too many approval requests from %s; retry after %v", whose, retry), retry
}

// decided tells flood control how a person decided ticket a. A denial
// that could not be counted for lockouts is reported: the lockout would
// otherwise never come.
func (g *Gate) decided(ctx context.Context, a store.Approval, approved bool) error {
	if g.flood == nil || a.Session == "" || a.User == "" || a.Requester.Agent == "" {
		return nil
	}
	err := g.flood.Decided(context.WithoutCancel(ctx), floodRequest(a, nil), approved)
	if err != nil && !approved {
		return fmt.Errorf("deny: %w: the denial could not be counted for lockouts", stepup.ErrStore)
	}
	return nil
}
