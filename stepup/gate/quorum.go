package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// A ticket whose route has a quorum above one (the rule of two and more)
// runs only after that many distinct people approved it, each with their
// own answer over the same challenge. Each approval is a vote the store
// keeps with the ticket ([store.Votes]); the one that reaches the quorum
// approves the ticket in the same transaction. The requester's principals
// never count (mayDecide), nor does anyone twice, nor a model, a policy or
// a grant.

// vote records v, a verified approval of pending ticket a, which needs
// quorum approvals.
func (g *Gate) vote(ctx context.Context, a store.Approval, v Verified, quorum int) (stepup.Ticket, error) {
	if slices.ContainsFunc(a.Votes, func(w store.Vote) bool { return w.Approver == v.User }) {
		return stepup.Ticket{}, fmt.Errorf("approve: %w: %s has already approved this ticket; it needs %d different people",
			stepup.ErrNotPermitted, v.User, quorum)
	}
	names := make([]string, 0, len(a.Votes)+1)
	for _, w := range a.Votes {
		names = append(names, w.Approver)
	}
	names = append(names, v.User)
	reason := fmt.Sprintf("approved by %s (%d of %d)", strings.Join(names, ", "), len(names), quorum)
	var (
		done store.Approval
		now  time.Time
	)
	err := g.atNow(ctx, func(at time.Time) (err error) {
		now = at
		done, err = g.st.Vote(ctx, a.ID, store.Vote{Approver: v.User, Evidence: g.sealAnswer(a, v.User, v.Evidence), At: at},
			quorum, reason, func(t store.Approval, _ bool) receipt.AuditRecord {
				if t.State == store.Approved {
					return g.record(t, receipt.DecisionApproved, reason, at)
				}
				r := g.record(t, receipt.DecisionCosigned,
					fmt.Sprintf("approval %d of %d, by %s", len(t.Votes), quorum, v.User), at)
				r.Approver = v.User
				return r
			})
		return err
	})
	if errors.Is(err, store.ErrDuplicate) {
		return stepup.Ticket{}, fmt.Errorf("approve: %w: %s has already approved this ticket", stepup.ErrNotPermitted, v.User)
	}
	if err != nil {
		return stepup.Ticket{}, ticketErr("approve", err)
	}
	g.changed()
	if done.State != store.Approved {
		g.observeDecided(ctx, done, receipt.DecisionCosigned, "cosigned by "+v.User, now)
		return view(done, now), nil
	}
	g.observeDecided(ctx, done, receipt.DecisionApproved, reason, now)
	_ = g.decided(ctx, done, true)
	return view(done, now), nil
}

// votesHold verifies the approvals of a ticket that needs quorum people
// under route r: at least that many votes by distinct people who may
// decide it, each tied to this row by the gate's MAC and each answer
// verifying again.
func (g *Gate) votesHold(ctx context.Context, a store.Approval, r Route, now time.Time, quorum int) error {
	if len(a.Votes) < quorum {
		return fmt.Errorf("%w: approved by %d of the %d people the ticket needs", stepup.ErrBadAssertion,
			len(a.Votes), quorum)
	}
	users, err := g.routeOf(a, r, now)
	if err != nil {
		return fmt.Errorf("%w: %w", stepup.ErrBadAssertion, err)
	}
	seen := map[string]bool{}
	for _, v := range a.Votes {
		if seen[v.Approver] || mayDecide(v.Approver, a) != nil || !slices.Contains(users, v.Approver) {
			return fmt.Errorf("%w: an approval of the quorum names someone who may not count", stepup.ErrBadAssertion)
		}
		seen[v.Approver] = true
		evidence, err := g.openAnswerOf(a, v.Approver, v.Evidence)
		if err != nil {
			return err
		}
		if err := g.approver.Recheck(ctx, answerFor(a, v.Approver, evidence, v.At)); err != nil {
			if !errors.Is(err, stepup.ErrBadAssertion) {
				err = fmt.Errorf("%w: %w", stepup.ErrBadAssertion, err)
			}
			return err
		}
	}
	return nil
}
