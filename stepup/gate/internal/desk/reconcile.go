package desk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/internal/freetext"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Watermark implements [gate.Admin.Watermark].
func (ad *Admin) Watermark(ctx context.Context) (plug.Reconciliation, error) {
	g := ad.g
	if g.core.Mark() == nil {
		return plug.Reconciliation{}, fmt.Errorf("watermark: %w: this gate keeps no watermark", stepup.ErrConfig)
	}
	now, err := g.core.StoreNow(ctx)
	if err != nil {
		return plug.Reconciliation{}, err
	}
	err = g.core.Mark().Check(ctx, g.core.St(), now)
	var rb *core.RollbackError
	switch {
	case errors.As(err, &rb):
	case err != nil:
		return plug.Reconciliation{}, err
	}
	mark, spent := g.core.Mark().State()
	out := plug.Reconciliation{Marked: point(mark)}
	if rb != nil {
		out.Found, out.Store = rb.Why, point(rb.Store)
		out.Lost, err = g.lostRuns(ctx, spent)
		if err != nil {
			return plug.Reconciliation{}, err
		}
	} else {
		out.Store = out.Marked
	}
	return out, nil
}

// Reconcile implements [gate.Admin.Reconcile].
func (ad *Admin) Reconcile(ctx context.Context, by string) (plug.Reconciliation, error) {
	g := ad.g
	if by = freetext.Reason(by); by == "" || len(by) > store.MaxKeySize {
		return plug.Reconciliation{}, fmt.Errorf("reconcile: %w: name the operator who reviewed the store", stepup.ErrConfig)
	}
	found, err := ad.Watermark(ctx)
	if err != nil || found.Found == "" {
		return found, err // nothing to reconcile: the store is not behind
	}
	ctx = context.WithoutCancel(ctx) // once begun, it runs to its end
	mark, _ := g.core.Mark().State()
	// Whatever the store shows as not yet run, and existed when the gate
	// had already seen the store's clock at mark.Time, may have run in the
	// history the store lost: it is taken out of use. Tickets made since
	// are the store's new history, never seen before, and stay.
	cutoff := mark.Time.Add(core.ClockStepTolerance)
	why := "held by " + by + " at reconcile: the store went back (" + found.Found +
		"), and this call may have run before"
	ran := map[string]bool{}
	for _, r := range found.Lost {
		ran[r.Ticket] = true
	}
	f := store.Filter{States: []store.State{store.Pending, store.Approved, store.Executing}, Limit: store.MaxListLimit}
	for {
		page, next, err := g.core.St().List(ctx, f)
		if err != nil {
			return found, core.TicketErr("reconcile", err)
		}
		for _, a := range page {
			if a.CreatedAt.After(cutoff) {
				continue
			}
			h, err := g.hold(ctx, a, why)
			if err != nil {
				return found, fmt.Errorf("reconcile: hold %s: %w", a.ID, err)
			}
			h.Ran = ran[a.ID]
			found.Held = append(found.Held, h)
		}
		if next == "" {
			break
		}
		f.After = next
	}
	now, err := g.core.StoreNow(ctx)
	if err != nil {
		return found, err
	}
	reason := fmt.Sprintf("reconciled by %s: %s; store at seq %d head %s, watermark at seq %d head %s; %d tickets held, %d runs the store lost",
		by, found.Found, found.Store.Seq, found.Store.Head, found.Marked.Seq, found.Marked.Head, len(found.Held), len(found.Lost))
	head, err := g.core.St().AppendAudit(ctx, audit.Record{Time: now.UnixMilli(), Decision: audit.DecisionReconciled,
		Reason: reason, Approver: by, Session: "operator:" + by})
	if err != nil {
		return found, ticketstore.Err("reconcile: record", err)
	}
	if err := g.core.Mark().Reset(ctx, core.Mark{Seq: head.Seq, Head: head.Hash, Time: now}); err != nil {
		return found, fmt.Errorf("reconcile: %w", err)
	}
	g.core.ChangedAll()
	return found, nil
}

// hold takes ticket a out of use with its audit row: a pending ticket is
// cancelled, an approved one revoked, an executing one abandoned.
func (g *Gate) hold(ctx context.Context, a store.Approval, why string) (plug.Held, error) {
	h := plug.Held{Ticket: a.ID, Tool: a.Tool, Was: string(a.State), Key: a.IdempotencyKey}
	if h.Key == "" && a.Tool != plug.GrantTool {
		h.Key = receipt.IdempotencyKey(a.ID, a.Nonce)
	}
	now, err := g.core.StoreNow(ctx)
	if err != nil {
		return h, err
	}
	switch a.State {
	case store.Pending:
		_, err = g.core.St().Resolve(ctx, a.ID, store.Resolution{To: store.Cancelled, Reason: why, At: now},
			g.core.Note(audit.DecisionCancelled, why, now))
	case store.Approved:
		_, err = g.core.St().Resolve(ctx, a.ID, store.Resolution{To: store.Revoked, Approver: a.Approver, Reason: why, At: now},
			g.core.Note(audit.DecisionRevoked, why, now))
	case store.Executing:
		raw, _ := json.Marshal(ticketstore.Result{Error: "held at reconcile"})
		note := g.core.Note(audit.DecisionAbandoned, why, now)
		_, err = g.core.St().Finish(ctx, a.ID, a.Fence, store.Outcome{State: store.Abandoned, Result: raw, At: now},
			func(t store.Approval, m bool) audit.Record {
				r := note(t, m)
				r.Result = "held"
				return r
			})
	}
	if err != nil {
		return h, core.TicketErr("hold", err)
	}
	return h, nil
}

// lostRuns lists the runs the watermark saw start whose tickets the store
// no longer shows as run.
func (g *Gate) lostRuns(ctx context.Context, spent []core.Spent) ([]plug.Run, error) {
	var out []plug.Run
	seen := map[string]bool{}
	for i := len(spent) - 1; i >= 0; i-- { // newest first: one line a ticket
		s := spent[i]
		if seen[s.Ticket] {
			continue
		}
		seen[s.Ticket] = true
		a, err := g.core.St().Get(ctx, s.Ticket)
		shown := string(a.State)
		switch {
		case errors.Is(err, store.ErrNotFound):
			shown = "missing"
		case err != nil:
			return nil, core.TicketErr("watermark", err)
		case a.State.Ran() || (a.State == store.Executing && a.IdempotencyKey == s.Key) ||
			a.State == store.Abandoned && strings.HasPrefix(a.Reason, "held by "):
			continue
		}
		out = append(out, plug.Run{Ticket: s.Ticket, Key: s.Key, At: s.At, Shown: shown})
	}
	return out, nil
}

func point(m core.Mark) plug.MarkPoint {
	return plug.MarkPoint{Seq: m.Seq, Head: m.Head.String(), Time: m.Time.UTC().Truncate(time.Microsecond)}
}
