package gate

import (
	"context"
	"errors"

	"github.com/agentstepup/asu/stepup/internal/ticketstore"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Sweep applies the timeout outcome to every pending ticket past its
// expiry and returns how many it timed out. Run it periodically; [Gate.Wait]
// and the approver's calls also time tickets out when they meet them.
func (g *Gate) Sweep(ctx context.Context) (int, error) {
	pending, err := g.st.Pending(ctx, store.Filter{})
	if err != nil {
		return 0, ticketstore.Err("sweep", err)
	}
	now := g.now()
	n := 0
	for _, a := range pending {
		if now.Before(a.ExpiresAt) {
			continue
		}
		if err := g.timeout(ctx, a); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// timeout cancels a pending ticket nobody decided in time and, when the
// policy names a safe alternative, proposes it in its place. Another gate
// doing the same first is not an error.
func (g *Gate) timeout(ctx context.Context, a store.Approval) error {
	now := g.now()
	d, eff, err := g.redecide(ctx, a)
	outcome := d.Timeout.Outcome
	if err != nil {
		outcome = OutcomeCancel
	}
	reason := "no decision in time; cancelled"
	if outcome == OutcomeAlternative {
		reason = "no decision in time; cancelled and proposed " + d.Timeout.Alternative + " instead"
	}
	done, err := g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Cancelled, Approver: "", Reason: reason, At: now})
	if errors.Is(err, store.ErrResolved) {
		return nil
	}
	if err != nil {
		return ticketstore.Err("timeout", err)
	}
	g.changed()
	if err := g.audit(ctx, g.record(done, receipt.DecisionCancelled, reason, now)); err != nil {
		return err
	}
	if outcome != OutcomeAlternative {
		return nil
	}
	// The cancellation is stored and audited as replaced by the
	// alternative: a caller's context ending now must not leave it unmade.
	_, err = g.propose(context.WithoutCancel(ctx), stepup.Call{Tool: d.Timeout.Alternative, Args: eff.Args, Task: eff.Task, Step: eff.Step,
		Session: a.Session, Principal: eff.Principal, Taint: a.Taint, Rationale: a.Rationale},
		alternativeID(a.ID))
	return err
}
