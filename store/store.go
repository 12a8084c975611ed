// Package store declares what the gate keeps durably: approval tickets and
// their single use, approvers' credentials, enrollment invites, flood
// counters, the audit chain and grants. Backends live in subpackages:
// store/memory (the reference), store/sqlite (the embedded default) and
// store/postgres (many gate replicas); store/storetest is the conformance
// suite every backend runs.
//
// # Tickets
//
// An [Approval] (a ticket) moves through these states:
//
//	pending ─Resolve─▶ approved ─Consume─▶ executing ─Finish─▶ done
//	   │
//	   ├─Resolve─▶ denied | expired | cancelled
//	   └─ExpirePending─▶ expired
//
// Every arrow is one transaction that checks the state it leaves, so across
// goroutines, processes and replicas sharing a database each arrow is taken
// at most once. [Execution.Consume] records the intent to execute (the
// idempotency key and time) in the same transaction that spends the approval:
// a crash after it leaves the ticket executing, listed by
// [Execution.Recover], and never consumable again.
//
// # Refusals
//
// Every refusal wraps one of the sentinel errors ([ErrNotFound],
// [ErrResolved], [ErrConsumed], ...), tested with errors.Is. A refused call
// changes nothing: unknown ids, records over [MaxFieldSize], a closed store
// and a cancelled context leave the store as it was. Errors never quote
// record contents.
//
// # Time
//
// Stores never read a clock: every time comes from the caller. Times are
// kept to the microsecond; finer precision is dropped by some backends.
//
// # Writing a backend
//
// Validate input before opening a transaction with [Approval.Check],
// [Resolution.Check], [CheckConsume], [CheckFinish], [Credential.Check],
// [Invite.Check], [Grant.Check], [CheckKey] and [CheckAudit], so every
// backend refuses the same records with the same sentinels; compute audit
// records with [ChainNext]; make ids with [NewID]. Then pass
// storetest.Run, storetest.RunProcesses if processes can share the
// database, and measure with storetest.Bench.
package store

import (
	"context"
	"io"
	"time"

	"github.com/agentstepup/asu/receipt"
)

// Tickets parks, reads and resolves approval tickets.
type Tickets interface {
	// Park stores a as a new pending ticket, unless a live pending ticket
	// (ExpiresAt after a.CreatedAt) with the same Session and Digest exists:
	// then that ticket's Merged count is incremented and it is returned with
	// merged true. Otherwise caps are enforced in the same transaction: when
	// the session or the user already has caps.PerSession or caps.PerUser
	// live pending tickets, Park fails with [ErrPendingCap]. An empty a.ID is
	// replaced by [NewID]; a taken one fails with [ErrDuplicate]. a.State
	// must be empty or [Pending]; see [Approval.Check] for the other rules.
	Park(ctx context.Context, a Approval, caps Caps) (t Approval, merged bool, err error)
	// Get returns the ticket id, or [ErrNotFound].
	Get(ctx context.Context, id string) (Approval, error)
	// Resolve moves a pending ticket to r.To (approved, denied, expired or
	// cancelled), recording the approver, reason, evidence and time. It fails
	// with [ErrResolved] when the ticket is no longer pending, and with
	// [ErrExpired] when r.To is approved and r.At is at or after ExpiresAt
	// (the ticket then stays pending until [Tickets.ExpirePending]).
	Resolve(ctx context.Context, id string, r Resolution) (Approval, error)
	// ExpirePending marks every pending ticket whose ExpiresAt is at or
	// before now as expired (ResolvedAt now) and returns them, by ExpiresAt
	// then ID.
	ExpirePending(ctx context.Context, now time.Time) ([]Approval, error)
	// Pending lists the pending tickets matching f, by CreatedAt then ID. Tickets
	// past their expiry but not yet swept by ExpirePending are included.
	Pending(ctx context.Context, f Filter) ([]Approval, error)
}

// Execution spends approved tickets exactly once.
type Execution interface {
	// Consume moves an approved ticket to executing and records key and at
	// as its IdempotencyKey and ConsumedAt, in one transaction. It fails with
	// [ErrConsumed] when the ticket is executing or done, [ErrNotApproved]
	// when it is in any other state, and [ErrExpired] when at is at or after
	// ExpiresAt. Of any number of concurrent calls, at most one succeeds.
	Consume(ctx context.Context, id, key string, at time.Time) (Approval, error)
	// Finish moves an executing ticket to done with its result. It fails
	// with [ErrNotExecuting] in any other state.
	Finish(ctx context.Context, id string, result []byte, at time.Time) (Approval, error)
	// Recover lists the executing tickets by ConsumedAt then ID: those a
	// crash interrupted after Consume and before Finish. Re-run them with
	// their IdempotencyKey; never consume them again.
	Recover(ctx context.Context) ([]Approval, error)
}

// Approvals is the whole life of a ticket.
type Approvals interface {
	Tickets
	Execution
}

// Credentials keeps approvers' WebAuthn credentials.
type Credentials interface {
	// PutCredential stores c; an existing c.ID fails with [ErrDuplicate].
	PutCredential(ctx context.Context, c Credential) error
	// GetCredential returns the credential id, or [ErrNotFound].
	GetCredential(ctx context.Context, id []byte) (Credential, error)
	// CredentialsByUser lists user's credentials, oldest first; none is not
	// an error.
	CredentialsByUser(ctx context.Context, user string) ([]Credential, error)
	// AdvanceSignCount sets the credential's SignCount to n if n is greater
	// than the stored count, and fails with [ErrCounter] otherwise: a counter
	// that did not increase means a cloned authenticator, so the assertion
	// must be refused. The one exception is stored 0 and n 0, which
	// authenticators without a counter always send (WebAuthn §6.1.1); once a
	// counter has been seen above 0, n 0 is refused.
	AdvanceSignCount(ctx context.Context, id []byte, n uint32) error
}

// Invites keeps enrollment invites, minted by an administrator and
// redeemed once by the user enrolling a credential.
type Invites interface {
	// CreateInvite stores inv; an existing TokenHash fails with
	// [ErrDuplicate].
	CreateInvite(ctx context.Context, inv Invite) error
	// RedeemInvite marks the invite redeemed at at and returns it. It fails
	// with [ErrNotFound] for an unknown hash, [ErrConsumed] when already
	// redeemed and [ErrExpired] when at is at or after ExpiresAt.
	RedeemInvite(ctx context.Context, tokenHash [32]byte, at time.Time) (Invite, error)
	// GetInvite returns the invite stored under tokenHash, redeemed or not
	// (RedeemedAt says which), and fails with [ErrNotFound] for an unknown
	// hash. It only reads: an early check made with it decides nothing,
	// since the invite may be redeemed or expire before [Invites.RedeemInvite].
	GetInvite(ctx context.Context, tokenHash [32]byte) (Invite, error)
}

// Counters holds flood-control state shared by every gate replica.
type Counters interface {
	// AddCount adds delta to the counter (key, window) and returns the new
	// value, atomically; window is the start of the caller's time window and
	// a new window counts from zero. A key keeps its two newest windows:
	// adding to an older one returns delta and keeps nothing.
	AddCount(ctx context.Context, key string, window time.Time, delta int64) (int64, error)
	// IncrStreak adds one to the streak key, sets its Last to at and returns
	// the new count.
	IncrStreak(ctx context.Context, key string, at time.Time) (int, error)
	// ResetStreak sets the streak key back to zero.
	ResetStreak(ctx context.Context, key string) error
	// GetStreak returns the streak key; an unknown key is the zero Streak.
	GetStreak(ctx context.Context, key string) (Streak, error)
}

// AuditLog is the append-only hash chain of decisions.
type AuditLog interface {
	// AppendAudit appends r and returns it as stored. In one transaction it
	// reads the chain head, sets r.Seq to the head's Seq+1 and r.PrevHash to
	// the head's Hash (zero for the first record), and sets r.Hash with
	// [receipt.AuditRecord.ComputeHash]; values the caller put in those
	// fields are ignored. Args is stored in canonical form. [ChainNext] does
	// all this for backends. Concurrent appends never fork the chain.
	AppendAudit(ctx context.Context, r receipt.AuditRecord) (receipt.AuditRecord, error)
	// AuditHead returns the last record, or the zero record when the chain
	// is empty. Its Hash anchors a later [receipt.VerifyChain].
	AuditHead(ctx context.Context) (receipt.AuditRecord, error)
	// AuditRange lists the records whose Time is in [from, to), by Seq.
	AuditRange(ctx context.Context, from, to time.Time) ([]receipt.AuditRecord, error)
	// AuditByTask lists the records of task, by Seq.
	AuditByTask(ctx context.Context, task string) ([]receipt.AuditRecord, error)
}

// Grants keeps delegated approvals and their remaining uses.
type Grants interface {
	// PutGrant stores g; an existing g.ID fails with [ErrDuplicate].
	PutGrant(ctx context.Context, g Grant) error
	// GetGrant returns the grant id, or [ErrNotFound].
	GetGrant(ctx context.Context, id string) (Grant, error)
	// UseGrant takes one use of grant id at at and returns the grant after
	// it. It fails with [ErrExpired] when at is at or after ExpiresAt
	// (checked first), and with [ErrGrantUsedUp] when no use remains.
	UseGrant(ctx context.Context, id string, at time.Time) (Grant, error)
}

// Store is everything the gate keeps. Methods are safe for concurrent use;
// after Close they fail with [ErrClosed] (Close itself may be called again).
type Store interface {
	Tickets
	Execution
	Credentials
	Invites
	Counters
	AuditLog
	Grants
	io.Closer
}
