package gate

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// MaxDwell bounds [WithDwell].
const MaxDwell = 10 * time.Minute

// WithDwell sets the least time between a ticket's card being first shown
// to an approver ([Desk.Show]) and an approval of it, for the effect
// classes named (every class when none is named); zero removes it. The
// default is [DefaultDwell] for external and irreversible calls. The gate
// enforces it, not the page: the first showing is stored with the ticket
// (by the store's clock, shared by replicas), an approval sooner than the
// dwell is refused with [stepup.ErrTooFast] and changes nothing (the
// approver reads the card and approves again), and an approval of a card
// never shown is refused too. Denials are never held back, and a model
// approver ([WithModelJudge]) has no dwell.
func WithDwell(d time.Duration, classes ...string) Option {
	return func(g *Gate) error {
		if d < 0 || d > MaxDwell {
			return fmt.Errorf("%w: dwell must be from 0 to %v", stepup.ErrConfig, MaxDwell)
		}
		if len(classes) == 0 {
			classes = []string{card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible}
		}
		for _, c := range classes {
			switch c {
			case card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible:
				g.dwell[c] = d
			default:
				return fmt.Errorf("%w: dwell for unknown effect class %q", stepup.ErrConfig, c)
			}
		}
		return nil
	}
}

// shown records that ticket a's card is being shown at now, if it was
// not shown before.
func (g *Gate) shown(ctx context.Context, a store.Approval, now time.Time) error {
	if !a.ShownAt.IsZero() {
		return nil
	}
	if _, err := g.st.Show(ctx, a.ID, now); err != nil {
		return ticketErr("prompt", err)
	}
	return nil
}

// dwelt refuses an approval of ticket a at now that comes sooner after
// its card was first shown than its class's dwell time.
func (g *Gate) dwelt(a store.Approval, now time.Time) error {
	d := g.dwell[a.EffectClass]
	if d <= 0 {
		return nil
	}
	if a.ShownAt.IsZero() {
		return fmt.Errorf("%w: the card was never shown; show it, then approve", stepup.ErrTooFast)
	}
	if took := now.Sub(a.ShownAt); took < d {
		return fmt.Errorf("%w: approved %v after the card was first shown; %s calls need at least %v",
			stepup.ErrTooFast, took.Round(100*time.Millisecond), a.EffectClass, d)
	}
	return nil
}
