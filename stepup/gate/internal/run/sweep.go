package run

import (
	"context"
	"errors"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Sweep implements [gate.Gate.Sweep].
func (g *Gate) Sweep(ctx context.Context) (int, error) {
	now, err := g.core.Now(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for f := (store.Filter{States: []store.State{store.Pending}, Limit: store.MaxListLimit}); ; {
		page, next, err := g.core.St.List(ctx, f)
		if err != nil {
			return n, core.TicketErr("sweep", err)
		}
		for _, a := range page {
			if now.Before(a.ExpiresAt) {
				continue
			}
			if err := g.ExpireTicket(ctx, a); err != nil {
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

// ExpireTicket cancels a pending ticket nobody decided in time and, when the
// policy names a safe alternative, proposes it in its place. Another gate
// doing the same first is not an error.
func (g *Gate) ExpireTicket(ctx context.Context, a store.Approval) error {
	now, err := g.core.Now(ctx)
	if err != nil {
		return err
	}
	d, s, err := g.core.Redecide(ctx, a)
	outcome := d.Timeout.Outcome
	if err != nil {
		outcome = plug.OutcomeCancel
	}
	reason := stepup.ReasonNoDecision + "; cancelled"
	if outcome == plug.OutcomeAlternative {
		reason = stepup.ReasonNoDecision + "; cancelled and proposed " + d.Timeout.Alternative + " instead"
	}
	_, err = g.core.St.Resolve(ctx, a.ID, store.Resolution{To: store.Cancelled, Reason: reason, At: now},
		g.core.Note(receipt.DecisionCancelled, reason, now))
	if errors.Is(err, store.ErrResolved) {
		return nil
	}
	if err != nil {
		return core.TicketErr("timeout", err)
	}
	g.core.Changed()
	g.core.ObserveDecided(ctx, a, receipt.DecisionExpired, reason, now)
	if outcome != plug.OutcomeAlternative {
		return nil
	}
	// The cancellation is stored and audited as replaced by the
	// alternative: a caller's context ending now must not leave it unmade.
	eff := s.Effect()
	_, err = g.ProposeWithID(context.WithoutCancel(ctx), stepup.Call{Tool: d.Timeout.Alternative, Args: eff.Args,
		Task: eff.Task, Step: eff.Step, Session: a.Session, Principal: eff.Principal, Taint: a.Taint,
		Rationale: a.Rationale}, core.AlternativeID(a.ID))
	return err
}
