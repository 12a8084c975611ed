package core

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Route returns the route of a stored ticket under the policy it was
// parked under.
func (g *Gate) Route(ctx context.Context, a store.Approval) (plug.Route, error) {
	if a.Tool == plug.GrantTool {
		return plug.Route{}, nil // its own user approves it
	}
	if r, ok := g.cfg.Policy.(plug.Router); ok {
		if route, ok := r.Route(a.Tool, a.PolicyVersion); ok {
			return route, nil
		}
		return plug.Route{}, fmt.Errorf("%w: the policy no longer routes the ticket", stepup.ErrPolicyChanged)
	}
	d, _, err := g.Redecide(ctx, a)
	if err != nil {
		return plug.Route{}, err
	}
	return plug.Route{Approvers: d.Approvers, Timeout: d.Timeout, Quorum: d.Quorum}, nil
}

// QuorumOf is how many distinct approvals route needs: at least one.
func QuorumOf(r plug.Route) int { return max(r.Quorum, 1) }

// ApproversOf returns who may decide ticket a at now.
func (g *Gate) ApproversOf(ctx context.Context, a store.Approval, now time.Time) ([]string, error) {
	route, err := g.Route(ctx, a)
	if err != nil {
		return nil, err
	}
	return g.Deciders(a, route, now)
}

// Deciders returns who may decide ticket a at now under route: its user
// when the route names no approver group, otherwise the group's members
// (and, once an escalating ticket's first stage has passed, the members of
// the group it escalates to). The requester's agent and delegations are
// never among them, nor anyone whose id is not a person's.
func (g *Gate) Deciders(a store.Approval, route plug.Route, now time.Time) ([]string, error) {
	groups := []string{route.Approvers}
	if route.Timeout.Outcome == plug.OutcomeEscalate && !now.Before(a.CreatedAt.Add(g.stage(route.Timeout))) {
		groups = append(groups, route.Timeout.EscalateTo)
	}
	var users []string
	for _, name := range groups {
		if name == "" {
			users = append(users, a.User)
			continue
		}
		members, ok := g.cfg.Groups[name]
		if !ok {
			return nil, fmt.Errorf("%w: unknown approver group %q", stepup.ErrConfig, name)
		}
		users = append(users, members...)
	}
	users = slices.DeleteFunc(users, func(u string) bool { return MayDecide(u, a) != nil })
	slices.Sort(users)
	users = slices.Compact(users)
	if len(users) == 0 {
		return nil, fmt.Errorf("%w: nobody may decide this ticket", stepup.ErrNotPermitted)
	}
	return users, nil
}

// MayDecide refuses as deciders of a anyone who is not a person (agents,
// the gate's reserved names, malformed ids) and the requester's own
// principals.
func MayDecide(user string, a store.Approval) error {
	switch {
	case CheckPerson(user) != nil:
		return stepup.ErrNotPermitted
	case user == a.Requester.Agent, slices.Contains(a.Requester.Delegations, user):
		return stepup.ErrNotPermitted
	}
	return nil
}

// AnswerOf is the stored approval of ticket a, with the approver's own
// evidence (from [Gate.OpenAnswer]).
func AnswerOf(a store.Approval, evidence []byte) plug.Answer {
	return AnswerFor(a, a.Approver, evidence, a.ResolvedAt)
}

// AnswerFor is who's stored approval of ticket a, given at at.
func AnswerFor(a store.Approval, who string, evidence []byte, at time.Time) plug.Answer {
	return plug.Answer{
		Request:  NewRequest(plug.ActionApprove, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, []string{who}),
		Verified: plug.Verified{User: who, Evidence: bytes.Clone(evidence)},
		Effect:   bytes.Clone(a.Effect), Card: bytes.Clone(a.Card), At: at,
	}
}

// RecheckStored re-parses a stored effect and checks it against its
// digest, without re-resolving its references.
func (g *Gate) RecheckStored(a store.Approval) (canon.Sealed, error) {
	s, err := canon.ParseSealed(a.Effect)
	if err != nil || !s.Digest().Equal(a.Digest) {
		return canon.Sealed{}, fmt.Errorf("%w: stored effect does not hash as approved", stepup.ErrEffectChanged)
	}
	return s, nil
}

// stage returns how long the first approver group has.
func (g *Gate) stage(t plug.Timeout) time.Duration {
	if t.After > 0 {
		return t.After
	}
	return g.cfg.TTL
}

// Escalation returns the group a ticket created at created escalates to
// under timeout t, and when: "" and the zero time when t does not
// escalate. The store keeps both ([store.Approval].EscalatesTo), so the
// group's queue finds the ticket from then on, when [Gate.Deciders]
// counts the group in.
func (g *Gate) Escalation(created time.Time, t plug.Timeout) (string, time.Time) {
	if t.Outcome != plug.OutcomeEscalate || t.EscalateTo == "" {
		return "", time.Time{}
	}
	return t.EscalateTo, created.Add(g.stage(t))
}

// Window returns how long a parked ticket lives: one stage, or two when it
// escalates to another group.
func (g *Gate) Window(t plug.Timeout) time.Duration {
	if t.Outcome == plug.OutcomeEscalate {
		return 2 * g.stage(t)
	}
	return g.stage(t)
}

// Redecide asks the policy again about a stored ticket, for its route and
// card context. It fails with [stepup.ErrPolicyChanged] when the policy's
// version differs from the one the ticket was decided under, or the
// policy now denies the call: the ticket was decided under rules that no
// longer hold.
func (g *Gate) Redecide(ctx context.Context, a store.Approval) (plug.Decision, canon.Sealed, error) {
	s, err := canon.ParseSealed(a.Effect)
	if err != nil {
		return plug.Decision{}, canon.Sealed{}, fmt.Errorf("%w: stored effect does not parse", stepup.ErrEffectChanged)
	}
	d, err := g.RedecideSealed(ctx, a, s)
	return d, s, err
}

// RedecideSealed is [Gate.Redecide] of a ticket whose stored effect is
// already parsed, as s.
func (g *Gate) RedecideSealed(ctx context.Context, a store.Approval, s canon.Sealed) (plug.Decision, error) {
	if a.Tool == plug.GrantTool {
		return GrantDecision(), nil
	}
	d, err := g.Decide(ctx, plug.Proposal{Tool: s.Tool(), Parsed: s.Args(), Task: s.Task(),
		Step: s.Step(), Session: a.Session, Principal: s.Principal(), Taint: a.Taint})
	switch {
	case Misbehaviour(err) != "":
		return plug.Decision{}, fmt.Errorf("%w: policy could not decide: %w", stepup.ErrNotApproved, err)
	case err != nil:
		return plug.Decision{}, fmt.Errorf("%w: policy could not decide", stepup.ErrNotApproved)
	case d.PolicyVersion != s.PolicyVersion():
		return plug.Decision{}, fmt.Errorf("%w: decided under %q, the policy is now %q", stepup.ErrPolicyChanged,
			s.PolicyVersion(), d.PolicyVersion)
	case d.Verdict == plug.Deny:
		return plug.Decision{}, fmt.Errorf("%w: the policy now denies the call", stepup.ErrPolicyChanged)
	}
	return d, nil
}
