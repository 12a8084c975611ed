package gate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Wait blocks until ticket id leaves pending, or ctx ends (then it returns
// the ticket as last read with ctx's error). A pending ticket past its
// expiry is timed out on the spot with the policy's outcome, so Wait needs
// no sweeper to return. Decisions made through this gate wake it at once;
// decisions of other gates sharing the store are seen at the next poll.
func (g *Gate) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	var last stepup.Ticket // as last read, returned with ctx's error
	for {
		ch := g.changes()
		a, err := g.st.Get(ctx, string(id))
		if err != nil {
			if cerr := ctx.Err(); cerr != nil && last.ID != "" {
				return last, cerr
			}
			return stepup.Ticket{}, ticketErr("wait", err)
		}
		now, err := g.now(ctx)
		if err != nil {
			return last, err
		}
		last = view(a, now)
		if a.State == store.Pending && !now.Before(a.ExpiresAt) {
			if err := g.timeout(ctx, a); err != nil {
				return view(a, now), err
			}
			continue
		}
		if a.State != store.Pending {
			return g.withNext(ctx, view(a, now)), nil
		}
		timer := time.NewTimer(g.poll)
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

// Ticket returns ticket id as it stands now, without waiting. Denied calls
// are not stored, so their ids are not found.
func (g *Gate) Ticket(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	a, err := g.st.Get(ctx, string(id))
	if err != nil {
		return stepup.Ticket{}, ticketErr("ticket", err)
	}
	now, err := g.now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	return g.withNext(ctx, view(a, now)), nil
}

// Requester returns the principal ticket id was proposed for: the user,
// the agent and its delegations.
func (g *Gate) Requester(ctx context.Context, id stepup.TicketID) (canon.Principal, error) {
	a, err := g.st.Get(ctx, string(id))
	if err != nil {
		return canon.Principal{}, ticketErr("ticket", err)
	}
	return a.Requester, nil
}

// Cancel implements [stepup.Canceller]: it withdraws pending ticket id, at
// the runtime's request, with an audit row naming reason. An approval given
// later fails with [stepup.ErrResolved], and the approval page says the
// agent withdrew it.
func (g *Gate) Cancel(ctx context.Context, id stepup.TicketID, reason string) (stepup.Ticket, error) {
	a, err := g.st.Get(ctx, string(id))
	if err != nil {
		return stepup.Ticket{}, ticketErr("cancel", err)
	}
	if a.State != store.Pending {
		return stepup.Ticket{}, fmt.Errorf("cancel: %w", stepup.ErrResolved)
	}
	now, err := g.now(ctx)
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
	done, err := g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Cancelled, Reason: why, At: now},
		g.note(receipt.DecisionCancelled, why, now))
	if err != nil {
		return stepup.Ticket{}, ticketErr("cancel", err)
	}
	g.changed()
	g.observeDecided(ctx, done, receipt.DecisionCancelled, "withdrawn by the agent", now)
	return view(done, now), nil
}
