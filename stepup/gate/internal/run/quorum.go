package run

import (
	"cmp"
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

// VotesHold verifies the approvals of a ticket that needs quorum people
// under route r: at least that many votes by distinct people who may
// decide it, each tied to this row by the gate's MAC and each answer
// verifying again.
func (g *Gate) VotesHold(ctx context.Context, a store.Approval, r plug.Route, now time.Time, quorum int) error {
	if len(a.Votes) < quorum {
		return fmt.Errorf("%w: approved by %d of the %d people the ticket needs", stepup.ErrBadAssertion,
			len(a.Votes), quorum)
	}
	users, err := g.core.Deciders(a, r, now)
	if err != nil {
		return fmt.Errorf("%w: %w", stepup.ErrBadAssertion, err)
	}
	// A vote that no longer counts (its approver left the group, or their
	// passkey's answer no longer verifies) is passed over: the ticket runs
	// only if quorum others still count, which is what the desk read when
	// it approved it.
	seen := map[string]bool{}
	var first error
	for _, v := range a.Votes {
		if seen[v.Approver] || core.MayDecide(v.Approver, a) != nil || !slices.Contains(users, v.Approver) {
			first = cmp.Or(first, fmt.Errorf("%w: an approval of the quorum names someone who may not count", stepup.ErrBadAssertion))
			continue
		}
		evidence, err := g.core.OpenAnswerOf(a, v.Approver, v.Evidence, now)
		if err == nil {
			err = badEvidence(g.core.Approver.Recheck(ctx, core.AnswerFor(a, v.Approver, evidence, v.At)))
		}
		if err != nil {
			if !errors.Is(err, stepup.ErrBadAssertion) {
				return err // not a verdict on the vote: a store or a plug-in failed
			}
			first = cmp.Or(first, err)
			continue
		}
		seen[v.Approver] = true
	}
	if len(seen) < quorum {
		return cmp.Or(first, fmt.Errorf("%w: approved by %d of the %d people the ticket needs", stepup.ErrBadAssertion,
			len(seen), quorum))
	}
	return nil
}
