package run

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/internal/freetext"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Wait implements [gate.Gate.Wait]. It reads the ticket, and again each
// time it may have changed: when this gate changes it, when the store says
// so (a [store.Watcher] hears other processes' changes too), when it
// expires, and at the poll interval, which for a store that watches is a
// safety net and otherwise the only way to hear another process.
func (g *Gate) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	var last stepup.Ticket // as last read, returned with ctx's error
	watcher, _ := g.core.St().(store.Watcher)
	for {
		here, release := g.core.Changes(string(id))
		there, releaseThere := nothing, func() {}
		if watcher != nil {
			there, releaseThere = watcher.Watch(string(id))
		}
		t, again, err := g.waitOnce(ctx, id, &last, here, there)
		release()
		releaseThere()
		if !again {
			return t, err
		}
	}
}

// nothing is a channel that never closes.
var nothing = make(<-chan struct{})

// waitOnce reads ticket id once and, while it is pending, waits for a
// sign it changed; again says to read it once more.
func (g *Gate) waitOnce(ctx context.Context, id stepup.TicketID, last *stepup.Ticket, here, there <-chan struct{}) (stepup.Ticket, bool, error) {
	a, err := g.get(ctx, id) // practice.go
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && last.ID != "" {
			return *last, false, cerr
		}
		return stepup.Ticket{}, false, core.TicketErr("wait", err)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return *last, false, err
	}
	if a, err = g.Lapse(ctx, a, now); err != nil { // approved only while runnable: see lapse.go
		return *last, false, err
	}
	*last = core.View(a, now)
	if a.State == store.Pending && !now.Before(a.ExpiresAt) {
		if err := g.ExpireTicket(ctx, a); err != nil {
			return core.View(a, now), false, err
		}
		return stepup.Ticket{}, true, nil
	}
	if a.State != store.Pending {
		return g.core.WithNext(ctx, core.View(a, now)), false, nil
	}
	// Wake at the poll interval, or when the ticket expires if sooner
	// (by the store's clock: a little after, never before).
	timer := time.NewTimer(min(g.core.Poll(), a.ExpiresAt.Sub(now)+time.Millisecond))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return *last, false, ctx.Err()
	case <-here:
	case <-there:
	case <-timer.C:
	}
	return stepup.Ticket{}, true, nil
}

// Ticket implements [gate.Gate.Ticket].
func (g *Gate) Ticket(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	a, err := g.get(ctx, id) // practice.go
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("ticket", err)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	if a, err = g.Lapse(ctx, a, now); err != nil {
		return stepup.Ticket{}, err
	}
	return g.core.WithNext(ctx, core.View(a, now)), nil
}

// Requester implements [gate.Gate.Requester].
func (g *Gate) Requester(ctx context.Context, id stepup.TicketID) (canon.Principal, error) {
	a, err := g.get(ctx, id) // practice.go
	if err != nil {
		return canon.Principal{}, core.TicketErr("ticket", err)
	}
	return a.Requester, nil
}

// Cancel implements [gate.Gate.Cancel].
func (g *Gate) Cancel(ctx context.Context, id stepup.TicketID, reason string) (stepup.Ticket, error) {
	a, err := g.get(ctx, id) // practice.go
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("cancel", err)
	}
	if a.State != store.Pending {
		return stepup.Ticket{}, fmt.Errorf("cancel: %w", stepup.ErrResolved)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	why := freetext.Reason(reason) // a reason is a short text, never the call's data
	if why == "" {
		why = "withdrawn by the agent"
	}
	done, err := g.core.St().Resolve(ctx, a.ID, store.Resolution{To: store.Cancelled, Reason: why, At: now},
		g.core.Note(audit.DecisionCancelled, why, now))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("cancel", err)
	}
	g.core.Changed(a.ID)
	g.core.ObserveDecided(ctx, done, audit.DecisionCancelled, "withdrawn by the agent", now)
	return core.View(done, now), nil
}
