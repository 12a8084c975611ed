package desk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// A vote counts only while it would still carry the ticket at Execute:
// its approver may decide the ticket now (still in the group, not the
// requester), the gate's MAC ties it to this row, and the approver's
// answer verifies again (a revoked passkey's does not). A vote that no
// longer counts is reported, with why, and the ticket needs another
// approval in its place; it never completes a quorum.

// standing splits ticket a's votes, routed by route, into those that
// count at now and those that no longer do.
func (g *Gate) standing(ctx context.Context, a store.Approval, route plug.Route, now time.Time) ([]plug.Signature, []plug.Dropped, error) {
	users, err := g.core.Deciders(a, route, now)
	if err != nil && !errors.Is(err, stepup.ErrNotPermitted) {
		return nil, nil, err
	}
	var (
		signed  []plug.Signature
		dropped []plug.Dropped
		seen    = map[string]bool{}
	)
	for _, v := range a.Votes {
		why := ""
		switch {
		case seen[v.Approver]:
			why = "a second approval by the same person"
		case core.MayDecide(v.Approver, a) != nil:
			why = "they requested this call"
		case !slices.Contains(users, v.Approver):
			why = "they may no longer decide it"
			if route.Approvers != "" {
				why = "they are no longer in " + route.Approvers
			}
		default:
			why = g.voteFails(ctx, a, v, now)
		}
		if why != "" {
			dropped = append(dropped, plug.Dropped{Approver: v.Approver, At: v.At, Why: why})
			continue
		}
		seen[v.Approver] = true
		signed = append(signed, plug.Signature{Approver: v.Approver, At: v.At})
	}
	return signed, dropped, nil
}

// voteFails says why vote v of ticket a no longer verifies, or "".
func (g *Gate) voteFails(ctx context.Context, a store.Approval, v store.Vote, now time.Time) string {
	evidence, err := g.core.OpenAnswerOf(a, v.Approver, v.Evidence, now)
	if err != nil {
		return "its record does not verify"
	}
	err = g.core.Approver().Recheck(ctx, core.AnswerFor(a, v.Approver, evidence, v.At))
	switch {
	case err == nil:
		return ""
	case errors.Is(err, stepup.ErrRevoked):
		return "their passkey was revoked"
	case errors.Is(err, stepup.ErrBadAssertion):
		return "their passkey's answer no longer verifies"
	}
	return "their passkey's answer could not be checked"
}

// progress is where ticket a, routed by route, stands at now.
func (g *Gate) progress(ctx context.Context, a store.Approval, route plug.Route, now time.Time) (plug.Progress, error) {
	p := plug.Progress{Needed: core.QuorumOf(route), Group: route.Approvers}
	switch {
	case !approvalStands(a):
		// A denial, an expiry, a cancellation or a revocation leaves no
		// approval that counts, whoever decided it and whatever votes it
		// held; a practice request (stored denied, whatever was answered)
		// never has one.
	case len(a.Votes) == 0:
		if a.State != store.Pending && a.Approver != "" && !core.ReservedApprover(a.Approver) {
			p.Signed = []plug.Signature{{Approver: a.Approver, At: a.ResolvedAt}}
		}
	default:
		signed, dropped, err := g.standing(ctx, a, route, now)
		if err != nil {
			return plug.Progress{}, err
		}
		p.Signed, p.Dropped = signed, dropped
	}
	if a.State != store.Pending || !now.Before(a.ExpiresAt) {
		return p, nil
	}
	users, err := g.core.Deciders(a, route, now)
	if err != nil && !errors.Is(err, stepup.ErrNotPermitted) {
		return plug.Progress{}, err
	}
	for _, u := range users {
		// Whoever voted, counted or not, is not awaited: the store keeps
		// one vote per person and ticket, so the gate takes no second one
		// (quorum.go), and the queue lists the ticket for them no more.
		if !p.SignedBy(u) && !votedOn(a, u) {
			p.Awaited = append(p.Awaited, u)
		}
	}
	return p, nil
}

// approvalStands reports whether ticket a is in a state its approvals
// count in: pending (its votes so far), or approved and on its way to run
// or run. A practice request is in none.
func approvalStands(a store.Approval) bool {
	if core.IsPractice(a) {
		return false
	}
	switch a.State {
	case store.Pending, store.Approved, store.Executing, store.Done, store.Failed:
		return true
	}
	return false
}

// votedOn reports whether user gave a vote on ticket a, whether it still
// counts or not.
func votedOn(a store.Approval, user string) bool {
	return slices.ContainsFunc(a.Votes, func(v store.Vote) bool { return v.Approver == user })
}

// Progress implements [gate.Desk.Progress].
func (d *Desk) Progress(ctx context.Context, id stepup.TicketID) (plug.Progress, error) {
	a, _, err := d.g.core.Load(ctx, "progress", id)
	if err != nil {
		return plug.Progress{}, err
	}
	now, err := d.g.core.Now(ctx)
	if err != nil {
		return plug.Progress{}, err
	}
	if a, err = d.g.run.Lapse(ctx, a, now); err != nil {
		return plug.Progress{}, err
	}
	route, err := d.g.core.Route(ctx, a)
	if err != nil {
		return plug.Progress{}, fmt.Errorf("progress: %w", err)
	}
	return d.g.progress(ctx, a, route, now)
}

// entryProgress fills in entry e's progress; a ticket whose route cannot
// be read keeps none (its prompt says why).
func (g *Gate) entryProgress(ctx context.Context, a store.Approval, e *plug.Entry, now time.Time) {
	route, err := g.core.Route(ctx, a)
	if err != nil {
		return
	}
	if p, err := g.progress(ctx, a, route, now); err == nil {
		e.Progress = p
	}
}

// promptProgress is where pending ticket a stands at now, for its prompt.
func (d *Desk) promptProgress(ctx context.Context, a store.Approval, now time.Time) (plug.Progress, error) {
	route, err := d.g.core.Route(ctx, a)
	if err != nil {
		return plug.Progress{}, err
	}
	return d.g.progress(ctx, a, route, now)
}
