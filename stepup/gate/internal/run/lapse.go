package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// A ticket that needs several people and reads approved must be one that
// Execute would run. When a voter leaves the group, loses their passkey or
// is revoked after the quorum was reached, the ticket goes back to pending
// with the votes that still count and a reason, at the first read that
// notices (the agent's Wait or Ticket, the approver's prompt or queue, a
// refused Execute). Readers on any replica may notice at once: the store's
// conditional Reopen lets one of them move the ticket, and the others read
// it again.

// Lapse returns ticket a, read at now, as it stands: unchanged unless it
// was approved by votes of which fewer than its quorum still count, in
// which case it is moved back to pending ([store.Votes.Reopen]) and
// returned as stored. A failure to judge the votes (the store or the
// Approver failed) leaves it as read: Execute still refuses it.
func (g *Gate) Lapse(ctx context.Context, a store.Approval, now time.Time) (store.Approval, error) {
	if a.State != store.Approved || len(a.Votes) == 0 || !now.Before(a.ExpiresAt) {
		return a, nil
	}
	r, err := g.core.Route(ctx, a)
	if err != nil {
		return a, nil
	}
	quorum := core.QuorumOf(r)
	keep, why, err := g.votesStanding(ctx, a, r, now)
	if err != nil || len(keep) >= quorum {
		return a, nil
	}
	reason := fmt.Sprintf("back to pending: %s; %d of the %d approvals it needs still count",
		strings.Join(why, "; "), len(keep), quorum)
	if len(reason) > 1024 {
		reason = strings.ToValidUTF8(reason[:1024], "")
	}
	back, err := g.core.St().Reopen(ctx, a.ID, store.Lapse{At: now, ApprovedAt: a.ResolvedAt, Keep: keep, Reason: reason},
		g.core.Note(audit.DecisionReopened, reason, now))
	switch {
	case err == nil:
		g.core.Changed(a.ID)
		return back, nil
	case errors.Is(err, store.ErrNotApproved), errors.Is(err, store.ErrConsumed), errors.Is(err, store.ErrRevoked),
		errors.Is(err, store.ErrExpired):
		// Another reader (or an Execute, a revocation, the clock) moved
		// it first: read what it decided.
		again, gerr := g.core.St().Get(ctx, a.ID)
		if gerr != nil {
			return a, core.TicketErr("ticket", gerr)
		}
		return again, nil
	}
	return a, nil // not a verdict: the store failed, and Execute refuses the ticket as read
}

// votesStanding splits ticket a's votes, routed by r, into the approvers
// whose votes still count at now and the reasons the others do not. It
// fails only when a vote could not be judged.
func (g *Gate) votesStanding(ctx context.Context, a store.Approval, r plug.Route, now time.Time) (keep, why []string, err error) {
	users, err := g.core.Deciders(a, r, now)
	if err != nil && !errors.Is(err, stepup.ErrNotPermitted) {
		return nil, nil, err
	}
	for _, v := range a.Votes {
		reason := ""
		switch {
		case slices.Contains(keep, v.Approver):
			continue // a second vote of one person never counts twice
		case core.MayDecide(v.Approver, a) != nil:
			reason = "they requested this call"
		case !slices.Contains(users, v.Approver):
			reason = "they may no longer decide it"
			if r.Approvers != "" {
				reason = "they are no longer in " + r.Approvers
			}
		default:
			evidence, oerr := g.core.OpenAnswerOf(a, v.Approver, v.Evidence, now)
			if oerr != nil {
				reason = "their vote's record does not verify"
				break
			}
			rerr := g.core.Approver().Recheck(ctx, core.AnswerFor(a, v.Approver, evidence, v.At))
			switch {
			case rerr == nil:
			case errors.Is(rerr, stepup.ErrRevoked):
				reason = "their passkey was revoked"
			case errors.Is(badEvidence(rerr), stepup.ErrBadAssertion):
				reason = "their passkey's answer no longer verifies"
			default:
				return nil, nil, rerr
			}
		}
		if reason == "" {
			keep = append(keep, v.Approver)
			continue
		}
		why = append(why, v.Approver+"'s approval no longer counts: "+reason)
	}
	return keep, why, nil
}
