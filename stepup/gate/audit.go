package gate

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// record starts an audit row for a stored ticket.
func (g *Gate) record(a store.Approval, decision, reason string, at time.Time) receipt.AuditRecord {
	r := receipt.AuditRecord{
		Time:           at.UnixMilli(),
		TicketID:       a.ID,
		Task:           a.Task,
		Step:           a.Step,
		Session:        a.Session,
		Tool:           a.Tool,
		EffectClass:    a.EffectClass,
		ArgsDigest:     a.Digest,
		Principal:      a.Requester,
		PolicyVersion:  a.PolicyVersion,
		Decision:       decision,
		Reason:         reason,
		Taint:          a.Taint,
		Approver:       a.Approver,
		IdempotencyKey: a.IdempotencyKey,
	}
	if a.Nonce != ([32]byte{}) && a.CardHash != (canon.Digest{}) {
		r.Nonce = hex.EncodeToString(a.Nonce[:])
		r.CardHash = a.CardHash.String()
	}
	if !a.CreatedAt.IsZero() {
		r.DecisionMillis = at.Sub(a.CreatedAt).Milliseconds()
	}
	if g.auditArgs && len(a.Effect) > 0 {
		if e, err := canon.ParseEffect(a.Effect); err == nil {
			r.Args = e.Args
		}
	}
	return r
}

// audit appends r. A decision that cannot be audited did not happen: the
// caller fails closed on the error.
func (g *Gate) audit(ctx context.Context, r receipt.AuditRecord) error {
	if _, err := g.st.AppendAudit(context.WithoutCancel(ctx), r); err != nil {
		return fmt.Errorf("audit: %w: %v", stepup.ErrStore, err)
	}
	return nil
}
