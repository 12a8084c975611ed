package run

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/gate/internal/core"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Wait implements [gate.Gate.Wait].
func (g *Gate) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	var last stepup.Ticket // as last read, returned with ctx's error
	for {
		ch := g.core.Changes()
		a, err := g.core.St.Get(ctx, string(id))
		if err != nil {
			if cerr := ctx.Err(); cerr != nil && last.ID != "" {
				return last, cerr
			}
			return stepup.Ticket{}, core.TicketErr("wait", err)
		}
		now, err := g.core.Now(ctx)
		if err != nil {
			return last, err
		}
		last = core.View(a, now)
		if a.State == store.Pending && !now.Before(a.ExpiresAt) {
			if err := g.ExpireTicket(ctx, a); err != nil {
				return core.View(a, now), err
			}
			continue
		}
		if a.State != store.Pending {
			return g.core.WithNext(ctx, core.View(a, now)), nil
		}
		timer := time.NewTimer(g.core.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return last, ctx.Err()
		case <-ch:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// Ticket implements [gate.Gate.Ticket].
func (g *Gate) Ticket(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	a, err := g.core.St.Get(ctx, string(id))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("ticket", err)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	return g.core.WithNext(ctx, core.View(a, now)), nil
}

// Requester implements [gate.Gate.Requester].
func (g *Gate) Requester(ctx context.Context, id stepup.TicketID) (canon.Principal, error) {
	a, err := g.core.St.Get(ctx, string(id))
	if err != nil {
		return canon.Principal{}, core.TicketErr("ticket", err)
	}
	return a.Requester, nil
}

// Cancel implements [gate.Gate.Cancel].
func (g *Gate) Cancel(ctx context.Context, id stepup.TicketID, reason string) (stepup.Ticket, error) {
	a, err := g.core.St.Get(ctx, string(id))
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
	why := strings.TrimSpace(reason)
	if why == "" {
		why = "withdrawn by the agent"
	}
	if len(why) > 512 {
		why = strings.ToValidUTF8(why[:512], "") // a reason is a short text, never the call's data
	}
	done, err := g.core.St.Resolve(ctx, a.ID, store.Resolution{To: store.Cancelled, Reason: why, At: now},
		g.core.Note(receipt.DecisionCancelled, why, now))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("cancel", err)
	}
	g.core.Changed()
	g.core.ObserveDecided(ctx, done, receipt.DecisionCancelled, "withdrawn by the agent", now)
	return core.View(done, now), nil
}
