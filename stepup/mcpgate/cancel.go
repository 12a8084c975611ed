package mcpgate

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Canceller withdraws a pending ticket on the runtime's behalf: the host
// that asked for the call cancelled it or timed out, so an approval made
// now would approve nothing. Cancel returns [stepup.ErrResolved] when the
// ticket was decided first; it never undoes a decision.
//
// The gate has no such method yet; [StoreCanceller] is the stand-in for
// an in-process gate. A remote gateway needs an agent API route for it.
type Canceller interface {
	Cancel(ctx context.Context, id stepup.TicketID, reason string) error
}

// CancelStore is what [StoreCanceller] needs of the gate's store.
type CancelStore interface {
	Resolve(ctx context.Context, id string, r store.Resolution) (store.Approval, error)
	AppendAudit(ctx context.Context, r receipt.AuditRecord) (receipt.AuditRecord, error)
}

// StoreCanceller is an ADAPTER standing in for a Cancel method of the
// gate (stepup/gate) until it has one: it resolves the pending ticket to
// cancelled in the gate's own store, with the audit row the gate would
// write. Use it only with a gate in this process on the same store.
// Waiters of the gate see the cancellation at their next poll.
type StoreCanceller struct {
	Store CancelStore
	// Now is the gate's clock (nil: time.Now).
	Now func() time.Time
}

// Cancel implements [Canceller].
func (c StoreCanceller) Cancel(ctx context.Context, id stepup.TicketID, reason string) error {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	at := now()
	ctx = context.WithoutCancel(ctx) // the caller's context has usually just ended
	done, err := c.Store.Resolve(ctx, string(id), store.Resolution{To: store.Cancelled, Reason: reason, At: at})
	switch {
	case errors.Is(err, store.ErrResolved):
		return fmt.Errorf("cancel: %w", stepup.ErrResolved)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("cancel: %w", stepup.ErrNotFound)
	case err != nil:
		return fmt.Errorf("cancel: %w: %v", stepup.ErrStore, err)
	}
	r := receipt.AuditRecord{Time: at.UnixMilli(), TicketID: done.ID, Task: done.Task, Step: done.Step,
		Session: done.Session, Tool: done.Tool, EffectClass: done.EffectClass, ArgsDigest: done.Digest,
		Principal: done.Requester, PolicyVersion: done.PolicyVersion, Decision: receipt.DecisionCancelled,
		Reason: reason, Taint: done.Taint}
	if done.Nonce != ([32]byte{}) && done.CardHash != (canon.Digest{}) {
		r.Nonce, r.CardHash = hex.EncodeToString(done.Nonce[:]), done.CardHash.String()
	}
	if !done.CreatedAt.IsZero() {
		r.DecisionMillis = at.Sub(done.CreatedAt).Milliseconds()
	}
	if _, err := c.Store.AppendAudit(ctx, r); err != nil {
		return fmt.Errorf("cancel: audit: %w: %v", stepup.ErrStore, err)
	}
	return nil
}
