package core

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup/plug"
)

// SecondPerson is gate.WithSecondPersonBelowFloor: an approver whose catch
// rate of practice requests lies wholly below Floor, over the audit of the
// last Window, may not approve a ticket of Classes alone.
type SecondPerson struct {
	Floor   float64
	Window  time.Duration
	Classes []string
}

// BelowFloorMaxAge is how long one reading of who is below the floor
// stands before the audit is read again.
const BelowFloorMaxAge = time.Minute

// belowFloor is the last reading of the approvers below the floor.
type belowFloor struct {
	mu    sync.Mutex
	at    time.Time
	below map[string]figures.CatchRate
}

// SecondPersonNeeded returns plug.ErrSecondPersonNeeded when user, approving
// a ticket of class, has a catch rate wholly below the floor; nil when the
// rule is off, does not name class, or user is above it (or has decided
// no practice request in the window). A reading of the audit stands for
// BelowFloorMaxAge of the store's time; one that fails is the store's
// error, so no approval of the class is made on a guess.
func (g *Gate) SecondPersonNeeded(ctx context.Context, user, class string) error {
	sp := g.cfg.Second
	if sp == nil || !slices.Contains(sp.Classes, class) {
		return nil
	}
	now, err := g.Now(ctx)
	if err != nil {
		return err
	}
	b := &g.below
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.below == nil || now.Sub(b.at) >= BelowFloorMaxAge || now.Before(b.at) {
		rows, err := g.cfg.St.AuditRange(ctx, now.Add(-sp.Window), now.Add(time.Millisecond))
		if err != nil {
			return TicketErr("approve", err)
		}
		r := figures.ComputeWithRule(rows, figures.RubberStampRule{CatchFloor: sp.Floor})
		b.below, b.at = map[string]figures.CatchRate{}, now
		for name, a := range r.ByApprover {
			if c := a.Catch; c != nil && c.High < sp.Floor {
				b.below[name] = *c
			}
		}
	}
	if _, ok := b.below[user]; ok {
		return plug.ErrSecondPersonNeeded
	}
	return nil
}

// SecondPersonNeededForGrant is [Gate.SecondPersonNeeded] for user
// issuing (or using) a grant: a grant is a ticket of its own class, but
// what it approves are the calls it covers, and an exact or plan grant
// names them by digest only, so it is taken to cover every class the
// rule names. A user below the floor issues no grant while the rule
// names any class.
func (g *Gate) SecondPersonNeededForGrant(ctx context.Context, user string) error {
	sp := g.cfg.Second
	if sp == nil || len(sp.Classes) == 0 {
		return nil
	}
	return g.SecondPersonNeeded(ctx, user, sp.Classes[0]) // who is below the floor does not depend on the class
}
