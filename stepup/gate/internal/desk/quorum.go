package desk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// A ticket whose route has a quorum above one (the rule of two and more)
// runs only after that many distinct people approved it, each with their
// own answer over the same challenge. Each approval is a vote the store
// keeps with the ticket ([store.Votes]); the one that reaches the quorum
// approves the ticket in the same transaction. The requester's principals
// never count (MayDecide), nor does anyone twice, nor a model, a policy or
// a grant.

// vote records v, a verified approval of pending ticket a, which needs
// quorum approvals.
func (g *Gate) vote(ctx context.Context, a store.Approval, v plug.Verified, quorum int, asOf time.Time) (stepup.Ticket, error) {
	// Only the votes that still count carry the ticket (progress.go): the
	// store approves it once it holds quorum votes beside those that no
	// longer do.
	route, err := g.core.Route(ctx, a)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("approve: %w", err)
	}
	signed, dropped, err := g.standing(ctx, a, route, asOf)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("approve: %w", err)
	}
	if votedOn(a, v.User) {
		// The store keeps one vote per person and ticket: a vote that no
		// longer counts is not replaced, and Progress awaits its approver
		// no more (progress.go), so the two always agree.
		for _, d := range dropped {
			if d.Approver == v.User {
				return stepup.Ticket{}, fmt.Errorf("approve: %w: the earlier approval of %s no longer counts (%s), and this ticket takes one approval per person; another person must approve it, or the call be proposed again",
					plug.ErrAlreadyApproved, v.User, d.Why)
			}
		}
		return stepup.Ticket{}, fmt.Errorf("approve: %w: %s has already approved this ticket; it needs %d different people",
			plug.ErrAlreadyApproved, v.User, quorum)
	}
	names := make([]string, 0, len(signed)+1)
	for _, w := range signed {
		names = append(names, w.Approver)
	}
	names = append(names, v.User)
	reason := fmt.Sprintf("approved by %s (%d of %d)", strings.Join(names, ", "), len(names), quorum)
	threshold := quorum + len(dropped)
	var (
		done store.Approval
		now  time.Time
	)
	err = g.core.AtNow(ctx, func(at time.Time) (err error) {
		now = at
		done, err = g.core.St().Vote(ctx, a.ID, store.Vote{Approver: v.User, Evidence: g.core.SealAnswer(a, v.User, v.Evidence), At: at},
			threshold, reason, func(t store.Approval, _ bool) audit.Record {
				if t.State == store.Approved {
					return g.core.Record(t, audit.DecisionApproved, reason, at)
				}
				r := g.core.Record(t, audit.DecisionCosigned,
					fmt.Sprintf("approval %d of %d, by %s", len(names), quorum, v.User), at)
				r.Approver = v.User
				return r
			})
		return err
	})
	if errors.Is(err, store.ErrDuplicate) {
		return stepup.Ticket{}, fmt.Errorf("approve: %w: %s has already approved this ticket", plug.ErrAlreadyApproved, v.User)
	}
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("approve", err)
	}
	g.core.Changed(a.ID)
	if done.State != store.Approved {
		g.core.ObserveDecided(ctx, done, audit.DecisionCosigned, "cosigned by "+v.User, now)
		return core.View(done, now), nil
	}
	g.core.ObserveDecided(ctx, done, audit.DecisionApproved, reason, now)
	_ = g.core.Decided(ctx, done, true)
	return core.View(done, now), nil
}
