package plug

import (
	"context"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// Store is what the gate keeps durably, one small interface per concern:
// the store's clock, tickets, their approvers' votes and first showing,
// their timeouts, their single use under a lease, grants used in the
// transaction that approves a call, and the audit chain. Every backend in store/ implements it. Credentials and
// invites belong to the approver (package passkey), counters to flood
// control.
type Store interface {
	store.Clock
	store.Tickets
	store.Votes
	store.Sweeper
	store.Execution
	GrantStore
	AuditLog
}

// GrantStore is the part of store.Grants the gate uses: reading, issuing
// and revoking grants, and taking a use of one in the transaction that
// stores the call it covers as approved.
type GrantStore interface {
	GetGrant(ctx context.Context, id string) (store.Grant, error)
	PutGrant(ctx context.Context, g store.Grant) error
	ParkGranted(ctx context.Context, a store.Approval, grantID string, note store.Note) (store.Approval, store.Grant, error)
	RevokeGrant(ctx context.Context, id string, at time.Time, note store.Note) error
}

// AuditLog is the part of store.AuditLog the gate uses: a refusal that
// stores no ticket is a row of its own, checkpoints sign the head, and the
// approval figures ([Admin.Metrics]) read a window of rows, and the
// watermark reads the row it marked. Every other decision's row is written by the store method that makes
// it, in the same transaction.
type AuditLog interface {
	AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error)
	AuditHead(ctx context.Context) (audit.Record, error)
	AuditRange(ctx context.Context, from, to time.Time) ([]audit.Record, error)
	AuditSeq(ctx context.Context, from, to uint64) ([]audit.Record, error)
}
