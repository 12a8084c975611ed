package gate

import (
	"context"
	"errors"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Sweep applies the timeout outcome to every pending ticket past its
// expiry, by the store's clock, and returns how many it timed out.
// [Gate.Maintain] runs it periodically; [Gate.Wait] and the approver's
// calls also time tickets out when they meet them.
func (g *Gate) Sweep(ctx context.Context) (int, error) {
	now, err := g.now(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for f := (store.Filter{States: []store.State{store.Pending}, Limit: store.MaxListLimit}); ; {
		page, next, err := g.st.List(ctx, f)
		if err != nil {
			return n, ticketErr("sweep", err)
		}
		for _, a := range page {
			if now.Before(a.ExpiresAt) {
				continue
			}
			if err := g.timeout(ctx, a); err != nil {
				return n, err
			}
			n++
		}
		if next == "" {
			return n, nil
		}
		f.After = next
	}
}

// timeout cancels a pending ticket nobody decided in time and, when the
// policy names a safe alternative, proposes it in its place. Another gate
// doing the same first is not an error.
func (g *Gate) timeout(ctx context.Context, a store.Approval) error {
	now, err := g.now(ctx)
	if err != nil {
		return err
	}
	d, s, err := g.redecide(ctx, a)
	outcome := d.Timeout.Outcome
	if err != nil {
		outcome = OutcomeCancel
	}
	reason := "no decision in time; cancelled"
	if outcome == OutcomeAlternative {
		reason = "no decision in time; cancelled and proposed " + d.Timeout.Alternative + " instead"
	}
	_, err = g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Cancelled, Reason: reason, At: now},
		g.note(receipt.DecisionCancelled, reason, now))
	if errors.Is(err, store.ErrResolved) {
		return nil
	}
	if err != nil {
		return ticketErr("timeout", err)
	}
	g.changed()
	g.observeDecided(ctx, a, receipt.DecisionExpired, reason, now)
	if outcome != OutcomeAlternative {
		return nil
	}
	// The cancellation is stored and audited as replaced by the
	// alternative: a caller's context ending now must not leave it unmade.
	eff := s.Effect()
	_, err = g.propose(context.WithoutCancel(ctx), stepup.Call{Tool: d.Timeout.Alternative, Args: eff.Args,
		Task: eff.Task, Step: eff.Step, Session: a.Session, Principal: eff.Principal, Taint: a.Taint,
		Rationale: a.Rationale}, alternativeID(a.ID))
	return err
}
