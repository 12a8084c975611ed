package desk

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/store"
)

// Shown records that ticket a's card is being shown at now, if it was
// not shown before.
func (g *Gate) Shown(ctx context.Context, a store.Approval, now time.Time) error {
	if !a.ShownAt.IsZero() {
		return nil
	}
	if _, err := g.core.St.Show(ctx, a.ID, now); err != nil {
		return core.TicketErr("prompt", err)
	}
	return nil
}

// Dwelt refuses an approval of ticket a at now that comes sooner after
// its card was first shown than its class's dwell time.
func (g *Gate) Dwelt(a store.Approval, now time.Time) error {
	d := g.core.Dwell[a.EffectClass]
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
