package core

import (
	"encoding/hex"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// Note returns the audit row of a decision as a store.Note: the store
// appends it in the transaction that makes the decision, so the two are
// stored together or not at all, and stamps its time.
func (g *Gate) Note(decision, reason string, at time.Time) store.Note {
	return func(a store.Approval, _ bool) audit.Record { return g.Record(a, decision, reason, at) }
}

// Record is the audit row of a decision about ticket a at at. Arguments
// appear by digest only, unless WithAuditArgsUnsafe.
func (g *Gate) Record(a store.Approval, decision, reason string, at time.Time) audit.Record {
	r := audit.Record{
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
	if !a.CreatedAt.IsZero() && !at.Before(a.CreatedAt) {
		r.DecisionMillis = at.Sub(a.CreatedAt).Milliseconds()
	}
	if g.cfg.AuditArgs && len(a.Effect) > 0 {
		if s, err := canon.ParseSealed(a.Effect); err == nil {
			r.Args = s.Effect().Args
		}
	}
	return r
}
