package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Admit asks flood control whether a call may prompt approvers. It returns
// the refusal's reason (empty when admitted) and when to retry.
func (g *Gate) Admit(ctx context.Context, r flood.Request) (string, time.Duration) {
	if g.cfg.Flood == nil {
		return "", 0
	}
	err := g.cfg.Flood.Admit(ctx, r)
	if err == nil {
		return "", 0
	}
	g.ObserveFlood(ctx, err)
	var le *flood.LimitError
	if !errors.As(err, &le) {
		return Why("approval requests cannot be admitted now; try again later", err), 0
	}
	retry := le.RetryAfter.Round(time.Second)
	if retry < le.RetryAfter {
		retry += time.Second
	}
	whose := map[flood.Scope]string{flood.ScopeSession: "this session", flood.ScopeAgent: "this agent",
		flood.ScopeUser: "this user", flood.ScopeApprover: "an approver",
		flood.ScopeTarget: "this user to this recipient", flood.ScopeFirstContact: "any user to a recipient not seen before"}[le.Scope]
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

// Decided tells flood control how a person decided ticket a. A denial
// that could not be counted for lockouts is reported: the lockout would
// otherwise never come.
func (g *Gate) Decided(ctx context.Context, a store.Approval, approved bool) error {
	if g.cfg.Flood == nil || a.Session == "" || a.User == "" || a.Requester.Agent == "" {
		return nil
	}
	err := g.cfg.Flood.Decided(context.WithoutCancel(ctx), FloodRequest(a, nil, StoredTarget(a)), approved)
	if err != nil && !approved {
		return fmt.Errorf("deny: %w: the denial could not be counted for lockouts", stepup.ErrStore)
	}
	return nil
}
