package desk

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// practiced resolves practice request a (gate.WithPractice), decided by
// v: approved (a miss) or denied (a catch). Either way it is resolved
// as denied, so that nothing ever runs and no receipt is made of it,
// with an audit row of the outcome's own kind; the ticket answered tells
// the approver it was practice and what gave it away.
func (g *Gate) practiced(ctx context.Context, a store.Approval, v plug.Verified, approved bool) (stepup.Ticket, error) {
	class, _ := audit.PracticeClass(a.Session)
	tell := g.practiceTell(ctx, a, class)
	kind, why := audit.DecisionPracticeCaught, "practice request caught: denied by "+v.User+"; "+tell
	if approved {
		kind, why = audit.DecisionPracticeMissed, "practice request missed: approved by "+v.User+"; nothing ran; "+tell
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	done, err := g.core.St().Resolve(ctx, a.ID, store.Resolution{To: store.Denied, Approver: v.User, Reason: why,
		Evidence: v.Evidence, At: now}, g.core.Note(kind, why, now))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("practice", err)
	}
	g.core.Changed(a.ID)
	g.core.ObservePracticed(ctx, done, kind, class, now)
	t := core.View(done, now)
	t.Reason = why
	return t, nil
}

// practiceTell says what gave practice request a of class away, by the
// value its card shows.
func (g *Gate) practiceTell(ctx context.Context, a store.Approval, class string) string {
	value := ""
	if dec, s, err := g.core.Redecide(ctx, a); err == nil {
		if cd, err := g.core.Render(s, dec, a.Taint, a.Rationale); err == nil {
			sum := cd.Summary()
			switch {
			case class == audit.PracticeLookalikeDomain && len(sum.Recipients) > 0:
				value = sum.Recipients[0].Domain
			case class == audit.PracticeAmountTenfold:
				value = sum.Amount
			}
		}
	}
	switch class {
	case audit.PracticeLookalikeDomain:
		return fmt.Sprintf("what gave it away: the recipient domain %q is a look-alike of a real one", value)
	case audit.PracticeAmountTenfold:
		return fmt.Sprintf("what gave it away: the amount %s is ten times the request it copied", value)
	}
	return "what gave it away: one field was changed from a real request"
}
