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
//	Park ─▶ pending ─Resolve─▶ approved ─Consume─▶ executing ─Finish─▶ done | failed | abandoned
//	           │                  ▲  │                 ▲    │
//	           │  Park (allowed) ─┘  └─Resolve─▶ revoked └────┘ Reclaim (lease expired)
//	           ├─Resolve─▶ denied | expired | cancelled
//	           └─ExpirePending─▶ expired
//
//	approved (by votes) ─Reopen─▶ pending, when the votes that still count fall short of the quorum
//
// Every arrow is one transaction that checks the state it leaves, so across
// goroutines, processes and replicas sharing a database each arrow is taken
// at most once. [Execution.Consume] records the intent to execute (the
// idempotency key, the owner and its lease) in the same transaction that
// spends the approval.
//
// # Leases and fencing
//
// An executing ticket has an Owner (the gate instance running it), a
// LeaseUntil the owner extends with [Execution.Renew] while the executor
// runs, and a fencing token, Fence: 1 at Consume and one more at each
// [Execution.Reclaim]. Only a ticket whose lease expired can be reclaimed,
// and reclaiming it fences its previous owner off: that owner's Renew and
// Finish then fail with [ErrFenced], so it cannot overwrite the new owner's
// outcome. A reclaimed ticket keeps its idempotency key: the executor sees
// the same key at every run (at least once, with the same key), and two
// owners never hold a live lease on one ticket at the same time.
//
// # Decisions and their audit rows
//
// Every method that changes a ticket, a grant, an invite or a credential
// takes a [Note]. The store calls it inside the transaction with the record
// as it will be stored, appends the returned audit record to the chain in
// the same transaction, and writes nothing at all when any step fails, so
// a decision and its audit row appear together or not at all. A nil Note
// writes no row; only tests pass one.
//
// # Durability
//
// A decision is durable when its method returns: Park, Resolve, Vote,
// Reopen, ExpirePending, Consume, Renew, Finish, Reclaim, the grant,
// invite and credential changes (the sign count among them),
// IncrStreak, ResetStreak and every audit append wait for the disk (for
// store/postgres, the server's synchronous_commit). Two writes that
// decide nothing may commit without waiting: [Votes.Show] and
// [Counters.AddCount] and [Counters.AddCounts] (when they add). A
// backend that relaxes them must make its commits durable in order, as
// one write-ahead log does: a relaxed commit becomes durable with the
// next durable commit made on the same database, by any connection,
// process or replica. A crash may then lose a showing or a flood count
// that no durable commit followed, and nothing else; each method says
// why that loss is safe. The flood counts ride on the park that follows
// them and the showing on the approval, when flood control counts in the
// gate's own store, as the gate sets it up by default; counters kept in
// a database of their own become durable only with that database's next
// durable commit. The sign count waits for the disk
// ([Credentials.AdvanceSignCount]): a sign-in relies on it with no
// decision after it. An approval's answer may advance it without waiting
// ([RelaxedSignCount]): every answer that verifies is followed by a
// durable commit on the gate's store that decides what it counted for
// (the vote or resolution, or the mark of an answer refused after it
// verified).
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
// A store has a clock ([Clock]): PostgreSQL's is the database's, shared by
// every replica; the embedded backends take one in their options. Audit
// records are stamped with it at append, never earlier than the chain's
// head, so times never decrease along the chain. Deciding methods (Resolve
// to approved, Consume, Reclaim, UseGrant, ParkGranted) refuse with
// [ErrClockSkew] a time that differs from the store's clock, read inside the
// transaction, by more than [MaxSkew]: a replica with a bad clock, or a
// stale time, cannot approve or execute after the real expiry. Times are
// kept to the microsecond; finer precision is dropped by some backends.
//
// # Integrity
//
// A store reads back only what it wrote. Every audit record it reads is
// checked against its own hash and, when the record before it is read
// too, its link to it ([CheckRead]); the head an append links to is
// checked before the append ([CheckHead]). A mismatch, a row that does
// not parse, or the database's own report of damaged pages is
// [ErrCorrupt], naming the seq or the row. From then on the store refuses
// every call that decides, writes or reads credentials with [ErrCorrupt]
// until it is reopened ([Damage]); the audit chain, tickets and grants
// stay readable, so an operator can see what is left. Backends that can
// check themselves end to end implement [Checker]. A record rewritten
// together with a new hash of its own is caught by the link of the record
// after it; at the head, only a mark kept outside the store can catch it.
//
// # Queues and waits
//
// An approver's queue is read with [Tickets.Queue]: one index range of
// pending tickets per source (the approver's user, each of their groups),
// ordered by expiry, a page long, so that reading the first page costs the
// same with ten tickets waiting or ten thousand. A waiting reader learns
// that a ticket changed from a [Watcher] instead of polling: store/memory
// wakes the watches of the ticket that changed; store/sqlite asks SQLite,
// on one connection and only while someone watches, whether any
// connection committed (it cannot say which ticket); store/postgres
// listens for the notification a trigger sends, at commit, for every
// change of a ticket's state or votes, whichever replica made it.
//
// # Writing a backend
//
// Validate input before opening a transaction with [Approval.Check],
// [Resolution.Check], [CheckConsume], [Claim.Check], [Outcome.Check],
// [Filter.Check], [CheckLease], [CheckTime], [Credential.Check],
// [Invite.Check], [Grant.Check], [CheckKey] and [CheckAudit], so every
// backend refuses the same records with the same sentinels; compare times
// with [CheckSkew] inside the transaction; complete audit records with
// [ChainNext]; make ids with [NewID]; check what you read with
// [CheckRead] and [CheckHead], and pass errors through a [Damage]. Then
// pass storetest.Run (with storetest.WithAuditTamper), process.Run
// (package storetest/process) if processes can share the database, and
// measure with storetest.Bench.
package store

import (
	"context"
	"io"
	"time"

	"github.com/agentstepup/asu/audit"
)

// MaxSkew is how far the time given to a deciding method may be from the
// store's clock before the method refuses with [ErrClockSkew].
const MaxSkew = 2 * time.Second

// Note makes the audit record of a state change. The store calls it inside
// the transaction, with the ticket as it will be stored (merged says
// whether Park merged into an existing ticket), and appends the record it
// returns in the same transaction; the record's Seq, PrevHash, Hash and
// Time are set by the store ([ChainNext]). Methods that change something
// other than a ticket (a credential, invite or grant revocation) call it
// with the zero Approval. A record the chain refuses fails the whole
// method, and nothing is written.
type Note func(a Approval, merged bool) audit.Record

// Clock is the store's clock, the one every deciding time is judged by.
type Clock interface {
	// Now returns the store's current time: PostgreSQL's clock_timestamp(),
	// or the clock the embedded backends were opened with.
	Now(ctx context.Context) (time.Time, error)
}

// Tickets parks, reads, resolves and lists approval tickets.
type Tickets interface {
	// Park stores a new ticket, pending, or approved in one step when
	// a.State is [Approved] (allowed by policy; a.Approver set), so no
	// ticket without a decision is ever left pending by an allowed call.
	//
	// A pending a merges into a live pending ticket (ExpiresAt after
	// a.CreatedAt, the oldest such) only when the proposals are identical:
	// the same Session, User, Digest, Requester (user, agent, delegations),
	// Taint (same labels in the same order), Rationale, PolicyVersion and
	// Approvers. That ticket's Merged count is incremented and it is
	// returned with merged true. Otherwise caps are enforced, for pending
	// tickets only, in the same transaction: when the principal's session
	// (a session id counts per user and requesting agent: it is the agent's
	// own name for its run) or the user already has caps.PerSession or
	// caps.PerUser live pending tickets, Park fails with [ErrPendingCap].
	// A practice request's ticket (its session under
	// [audit.PracticeSession]) never counts towards a user's cap: it takes
	// no real request's place, so counting what is admitted tells an agent
	// nothing of practice.
	//
	// An empty a.ID is replaced by [NewID]; a taken one fails with
	// [ErrDuplicate]. note is called with the stored ticket and merged and
	// its record appended in the same transaction. See [Approval.Check] for
	// the other rules.
	Park(ctx context.Context, a Approval, caps Caps, note Note) (t Approval, merged bool, err error)
	// Get returns the ticket id, or [ErrNotFound].
	Get(ctx context.Context, id string) (Approval, error)
	// Resolve moves a pending ticket to r.To (approved, denied, expired or
	// cancelled), recording the approver, reason, evidence and time, or an
	// approved ticket to revoked (keeping its approver and evidence, setting
	// Reason and FinishedAt). It fails with [ErrResolved] from any other
	// state, and, when r.To is approved, with [ErrClockSkew] when r.At is
	// off the store's clock by more than [MaxSkew] and with [ErrExpired]
	// when r.At is at or after ExpiresAt (the ticket then stays pending
	// until [Sweeper.ExpirePending]). note runs in the same transaction.
	Resolve(ctx context.Context, id string, r Resolution, note Note) (Approval, error)
	// List returns the tickets matching f, by CreatedAt then ID, at most
	// f.PageSize() of them, starting after the ticket f.After, and the
	// cursor for the next page: the last ID returned, or "" when no ticket
	// follows. An After that names no ticket fails with [ErrNotFound].
	List(ctx context.Context, f Filter) (page []Approval, next string, err error)
	// Queue returns the candidates of an approver's queue (see
	// [QueueFilter]), by ExpiresAt then ID, at most q.PageSize() of them,
	// starting after the ticket q.After, and the cursor for the next page:
	// the last ID returned, or "" when no candidate follows. Its cost
	// follows the page, not the tickets waiting: backends read it from an
	// index on pending tickets by user, by group and by escalation group,
	// ordered by expiry. An
	// After that names no ticket fails with [ErrNotFound].
	Queue(ctx context.Context, q QueueFilter) (page []Approval, next string, err error)
}

// Votes keeps what a ticket's approvers did before it was decided: when
// its card was first shown, and the approvals of a ticket that needs
// several distinct people (a quorum).
type Votes interface {
	// Show records that ticket id's card was shown at at: ShownAt is set
	// when it is zero and kept otherwise (the first showing counts). It
	// fails with [ErrNotFound] for an unknown id and writes no audit row.
	//
	// Show may return before the showing is durable (see Durability in
	// the package doc): a crash can lose a showing that no durable commit
	// followed. That is safe: every decision that read ShownAt commits
	// after it, so a vote or resolve that survives keeps the showing it
	// was judged by. A lost showing leaves ShownAt zero, as if the card
	// had never been shown: the gate refuses an approval of a ticket with
	// a dwell time until the card is shown again (and that answer never
	// counts later), and the dwell then counts from the new showing, so a
	// loss only ever lengthens the wait.
	Show(ctx context.Context, id string, at time.Time) (Approval, error)
	// Vote adds v, one person's approval, to pending ticket id, which
	// needs quorum distinct approvals, in one transaction with note's
	// record. When the votes reach quorum the ticket is approved in the
	// same transaction: State approved, Approver v.Approver, Reason
	// reason, ResolvedAt v.At, Evidence nil (each vote keeps its own).
	// A vote that leaves the ticket pending clears ShownAt: the next
	// approver's wait starts when the card is shown again.
	// It fails with [ErrResolved] when the ticket is not pending, with
	// [ErrDuplicate] when v.Approver already voted on it, with
	// [ErrClockSkew] when v.At is off the store's clock by more than
	// [MaxSkew] and with [ErrExpired] when v.At is at or after ExpiresAt;
	// see [CheckVote] for the rest. Across replicas sharing a database,
	// votes on one ticket are serialized: two people voting at once both
	// count, one person voting twice counts once.
	Vote(ctx context.Context, id string, v Vote, quorum int, reason string, note Note) (Approval, error)
	// Reopen moves ticket id, approved by votes, back to pending because
	// the votes that still count fell short of its quorum (see [Lapse]
	// and [Lapsed]), with note's record, in one transaction. It fails
	// with [ErrConsumed] when the ticket is executing or ran,
	// [ErrRevoked] when it was revoked, [ErrNotApproved] in any other
	// state, when it was approved without votes or when its ResolvedAt is
	// not l.ApprovedAt (another approval since), [ErrClockSkew] when l.At
	// is off the store's clock by more than [MaxSkew] and [ErrExpired]
	// when l.At is at or after ExpiresAt. Of any number of concurrent
	// calls, at most one succeeds; Consume and Reopen of one approval
	// never both do.
	Reopen(ctx context.Context, id string, l Lapse, note Note) (Approval, error)
}

// Sweeper expires pending tickets nobody decided.
type Sweeper interface {
	// ExpirePending marks every pending ticket whose ExpiresAt is at or
	// before now as expired (ResolvedAt now), with note's record for each in
	// the same transaction, and returns them by ExpiresAt then ID.
	ExpirePending(ctx context.Context, now time.Time, note Note) ([]Approval, error)
}

// Execution spends approved tickets exactly once and hands an interrupted
// execution over to another owner only when its lease has expired.
type Execution interface {
	// Consume moves an approved ticket to executing: IdempotencyKey c.Key,
	// Owner c.Owner, Fence 1, LeaseUntil c.LeaseUntil and ConsumedAt c.At,
	// with note's record, in one transaction. It fails with [ErrClockSkew]
	// when c.At is off the store's clock by more than [MaxSkew],
	// [ErrConsumed] when the ticket is executing or ran (done, failed,
	// abandoned), [ErrRevoked] when it was revoked, [ErrNotApproved] in any
	// other state, and [ErrExpired] when c.At is at or after ExpiresAt. Of
	// any number of concurrent calls, at most one succeeds.
	Consume(ctx context.Context, id string, c Claim, note Note) (Approval, error)
	// Renew sets the LeaseUntil of an executing ticket to until when its
	// Owner is owner and its Fence is fence, and fails with [ErrFenced]
	// otherwise (not executing, reclaimed by another owner). It writes no
	// audit row.
	Renew(ctx context.Context, id, owner string, fence int64, until time.Time) error
	// Finish moves an executing ticket to o.State (done, failed or
	// abandoned) with o.Result and FinishedAt o.At, with note's record, in
	// one transaction, when its Fence is fence. It fails with [ErrFenced]
	// otherwise, so a stale owner cannot overwrite the new owner's outcome.
	Finish(ctx context.Context, id string, fence int64, o Outcome, note Note) (Approval, error)
	// Expired lists the executing tickets whose LeaseUntil is at or before
	// at, by LeaseUntil then ID, at most limit of them (0 means 100, more
	// than 1000 means 1000, below 0 fails with [ErrInvalid]). It only reads:
	// take one over with Reclaim.
	Expired(ctx context.Context, at time.Time, limit int) ([]Approval, error)
	// Reclaim takes over an executing ticket whose lease expired (LeaseUntil
	// at or before c.At) and whose Fence is still fence: Owner c.Owner,
	// Fence+1, LeaseUntil c.LeaseUntil, with note's record, in one
	// transaction. The idempotency key does not change: c.Key must be empty
	// or the stored key ([ErrInvalid] otherwise). It fails with
	// [ErrClockSkew] like Consume, [ErrLeaseLive] when the lease has not
	// expired, and [ErrFenced] when the ticket is not executing or someone
	// else reclaimed it first. Of any number of concurrent calls with the
	// same fence, at most one succeeds.
	Reclaim(ctx context.Context, id string, fence int64, c Claim, note Note) (Approval, error)
}

// Credentials keeps approvers' WebAuthn credentials.
type Credentials interface {
	// PutCredential stores c; an existing c.ID fails with [ErrDuplicate].
	PutCredential(ctx context.Context, c Credential) error
	// GetCredential returns the credential id, revoked or not (RevokedAt
	// says which), or [ErrNotFound].
	GetCredential(ctx context.Context, id []byte) (Credential, error)
	// CredentialsByUser lists user's credentials, revoked ones included,
	// oldest first; none is not an error.
	CredentialsByUser(ctx context.Context, user string) ([]Credential, error)
	// AdvanceSignCount sets the credential's SignCount to n if n is greater
	// than the stored count, and fails with [ErrCounter] otherwise: a counter
	// that did not increase means a cloned authenticator, so the assertion
	// must be refused. The one exception is stored 0 and n 0, which
	// authenticators without a counter always send (WebAuthn §6.1.1); once a
	// counter has been seen above 0, n 0 is refused. A revoked credential
	// fails with [ErrRevoked], so it never approves again.
	//
	// The new count is durable when AdvanceSignCount returns (see
	// Durability in the package doc).
	AdvanceSignCount(ctx context.Context, id []byte, n uint32) error
	// RevokeCredential sets the credential's RevokedAt to at, with note's
	// record (note gets the zero Approval), in one transaction. It fails
	// with [ErrNotFound] for an unknown id and [ErrRevoked] when already
	// revoked.
	RevokeCredential(ctx context.Context, id []byte, at time.Time, note Note) error
}

// RelaxedSignCount is implemented by a [Credentials] that can advance a
// signature counter with a commit that need not wait for the disk. The
// passkey approver uses it for an approval's answer, never for a
// sign-in. An answer that verifies counts only through the durable
// commit the gate makes after it on the same store (its vote or
// resolution, or the mark that refuses it for good), and that commit
// makes the count durable too, as a relaxed commit becomes durable with
// the next durable one (see Durability). A power loss can undo the count
// only with everything after it: the answer then counted for nothing,
// and presented again it is judged as it would have been the first time.
// What is lost is one counter step of clone detection. Credentials kept
// in a database other than the gate's store become durable only with
// that database's next durable commit.
type RelaxedSignCount interface {
	// AdvanceSignCountRelaxed is [Credentials.AdvanceSignCount] with a
	// commit that may return before it is durable: the same rules, the
	// same refusals.
	AdvanceSignCountRelaxed(ctx context.Context, id []byte, n uint32) error
}

// Invites keeps enrollment invites, minted by an administrator and
// redeemed once by the user enrolling a credential.
type Invites interface {
	// CreateInvite stores inv; an existing TokenHash fails with
	// [ErrDuplicate].
	CreateInvite(ctx context.Context, inv Invite) error
	// RedeemInvite marks the invite redeemed at at and returns it. It fails
	// with [ErrNotFound] for an unknown hash, [ErrRevoked] when revoked,
	// [ErrConsumed] when already redeemed and [ErrExpired] when at is at or
	// after ExpiresAt.
	RedeemInvite(ctx context.Context, tokenHash [32]byte, at time.Time) (Invite, error)
	// GetInvite returns the invite stored under tokenHash, redeemed, revoked
	// or not (RedeemedAt and RevokedAt say which), and fails with
	// [ErrNotFound] for an unknown hash. It only reads: an early check made
	// with it decides nothing, since the invite may be redeemed, revoked or
	// expire before [Invites.RedeemInvite].
	GetInvite(ctx context.Context, tokenHash [32]byte) (Invite, error)
	// RevokeInvite sets an unredeemed invite's RevokedAt to at, with note's
	// record (note gets the zero Approval), in one transaction. It fails
	// with [ErrNotFound] for an unknown hash, [ErrConsumed] when already
	// redeemed and [ErrRevoked] when already revoked.
	RevokeInvite(ctx context.Context, tokenHash [32]byte, at time.Time, note Note) error
}

// CountPruner is a store whose counters can be pruned. A key of
// [Counters] keeps its newest windows until they are deleted, and the
// keys flood control counts in name sessions, agents and targets, so a
// service that never prunes keeps a row for every session it ever saw.
// [gate.Gate.Maintain] prunes the keys it and the built-in flood control
// own, each past the time its windows stop mattering. The memory, SQLite
// and PostgreSQL stores implement it.
type CountPruner interface {
	// PruneCounts deletes up to limit keys that start with prefix and
	// whose newest window started before before, with their windows, and
	// returns how many keys it deleted. prefix must not be empty; limit
	// at most [MaxPruneKeys] (0 means MaxPruneKeys).
	PruneCounts(ctx context.Context, prefix string, before time.Time, limit int) (int, error)
}

// MaxPruneKeys bounds the keys one [CountPruner.PruneCounts] deletes, so
// that a pass holds the store's write lock for a bounded time.
const MaxPruneKeys = 1000

// Counters holds flood-control state shared by every gate replica.
type Counters interface {
	// AddCount adds delta to the counter (key, window) and returns the new
	// value of the window it counted in, atomically; window is the start
	// of the caller's time window and a new window counts from zero. A
	// delta of 0 reads the count of window exactly (0 when the key does not
	// keep it) and changes nothing, so backends answer it without a write
	// transaction. Any other delta follows [ApplyCount], which fails
	// closed on clocks that disagree:
	//
	//   - a key keeps at most its two newest windows, and none whose
	//     count is 0, so a refund to zero leaves nothing behind;
	//   - an add to a window older than the key's newest and not kept
	//     counts in the newest (a clock that lags or stepped back is
	//     counted in the present, never given a fresh window); an add to
	//     the kept window before the newest counts there but returns its
	//     count plus the newest's, so a clock just behind a boundary
	//     neither overfills its own window nor spends what was left of it
	//     once the present is full;
	//   - a kept window more than [CountHorizon] after window is from a
	//     clock that ran ahead: its count moves into the window the add
	//     counts in, so it neither opens the limit (the count stays) nor
	//     holds the present back until that clock's time comes;
	//   - a window more than CountHorizon after the key's newest, further
	//     ahead of it than the newest is of the window before, drops
	//     nothing: the two kept windows are folded into one, so a clock
	//     that ran ahead does not evict the present's previous window.
	AddCount(ctx context.Context, key string, window time.Time, delta int64) (int64, error)
	// AddCounts applies ops in order, as AddCount would each, in one
	// transaction: all of them or, on error, none. It returns each op's
	// result in order. At most [MaxCountOps] ops; a batch of reads only
	// (every Delta 0) writes nothing.
	//
	// AddCount and AddCounts may return before the counts are durable
	// (see Durability in the package doc). The gate counts a request just
	// before it parks the request or records its refusal, and either
	// commit makes the counts durable: a crash can lose only the counts
	// of a request whose park or refusal did not commit, which parked
	// nothing and reached no approver. No request an approver was asked
	// about goes uncounted, and a lost refund leaves a count too high,
	// which errs on the strict side.
	AddCounts(ctx context.Context, ops []CountOp) ([]int64, error)
	// IncrStreak adds one to the streak key, moves its Last forward to at
	// (Last only moves forward, so a replica whose clock lags cannot
	// shorten a lockout) and returns the new count.
	IncrStreak(ctx context.Context, key string, at time.Time) (int, error)
	// ResetStreak sets the streak key back to zero.
	ResetStreak(ctx context.Context, key string) error
	// GetStreak returns the streak key; an unknown key is the zero Streak.
	GetStreak(ctx context.Context, key string) (Streak, error)
}

// AuditLog is the append-only hash chain of decisions.
type AuditLog interface {
	// AppendAudit appends r as a standalone record (a decision that changes
	// nothing stored, such as the denial of a call that parks no ticket) and
	// returns it as stored. In one transaction it reads the chain head and
	// completes r with [ChainNext]: Time from the store's clock but never
	// before the head's, Seq the head's plus one, PrevHash the head's Hash,
	// Args canonical, Hash; values the caller put in those fields are
	// ignored. Concurrent appends never fork the chain.
	AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error)
	// AuditHead returns the last record, or the zero record when the chain
	// is empty. Its Hash anchors a later [audit.VerifyChain].
	AuditHead(ctx context.Context) (audit.Record, error)
	// AuditRange lists the records whose Time is in [from, to), by Seq.
	// Since times never decrease along the chain, they are consecutive.
	AuditRange(ctx context.Context, from, to time.Time) ([]audit.Record, error)
	// AuditSeq lists the records with from <= Seq < to, by Seq.
	AuditSeq(ctx context.Context, from, to uint64) ([]audit.Record, error)
	// AuditByTask lists the records of task, by Seq.
	AuditByTask(ctx context.Context, task string) ([]audit.Record, error)
}

// Grants keeps delegated approvals and their remaining uses.
type Grants interface {
	// PutGrant stores g; an existing g.ID fails with [ErrDuplicate].
	PutGrant(ctx context.Context, g Grant) error
	// GetGrant returns the grant id, revoked or not, or [ErrNotFound].
	GetGrant(ctx context.Context, id string) (Grant, error)
	// UseGrant takes one use of grant id at at and returns the grant after
	// it. It fails with [ErrNotFound] for an unknown id, [ErrClockSkew] when
	// at is off the store's clock by more than [MaxSkew], [ErrRevoked] when
	// revoked, [ErrExpired] when at is at or after ExpiresAt, and
	// [ErrGrantUsedUp] when no use remains.
	UseGrant(ctx context.Context, id string, at time.Time) (Grant, error)
	// RevokeGrant sets the grant's RevokedAt to at, with note's record (note
	// gets the zero Approval), in one transaction. It fails with
	// [ErrNotFound] for an unknown id and [ErrRevoked] when already revoked.
	RevokeGrant(ctx context.Context, id string, at time.Time, note Note) error
	// ParkGranted takes one use of grantID at a.CreatedAt, refusing as
	// UseGrant does, and stores a as an approved ticket (a.State [Approved],
	// a.Approver set; never merged, no caps) with note's record, in one
	// transaction: both or neither. It returns the ticket and the grant
	// after the use.
	ParkGranted(ctx context.Context, a Approval, grantID string, note Note) (Approval, Grant, error)
}

// Store is everything the gate keeps. Methods are safe for concurrent use;
// after Close they fail with [ErrClosed] (Close itself may be called again).
type Store interface {
	Clock
	Tickets
	Votes
	Early
	Sweeper
	Execution
	Credentials
	Invites
	Counters
	AuditLog
	Grants
	io.Closer
}

// CountHorizon is how far apart two clocks counting one key may be and
// still be counted as one present: an add to a window at most this much
// before the key's newest counts in the newest (fail closed on a clock
// that lags), and a kept window more than this much after an add's window
// is taken for a clock that ran ahead and counted in the add's window
// instead (see [Counters.AddCount]). Clocks further apart than this are
// not told apart from a key left idle.
const CountHorizon = 24 * time.Hour

// CountWindow is one window a key of [Counters] keeps: its start and its
// count.
type CountWindow struct {
	Start time.Time
	N     int64
}

// ApplyCount is the rule of [Counters.AddCount] for a delta other than 0,
// for backends to share: given the windows a key keeps (at most two,
// oldest first), it returns those kept after adding delta to window, and
// the count the add returns. It does not modify kept.
//
// The add returns the new count of the window it counted in, except that
// an add to the older of two kept windows returns the sum of both.
func ApplyCount(kept []CountWindow, window time.Time, delta int64) ([]CountWindow, int64) {
	// Windows from a clock that ran ahead of this add: their count is
	// counted here, and they are kept no more.
	ahead := window.Add(CountHorizon)
	var moved int64
	near := make([]CountWindow, 0, 3)
	for _, w := range kept {
		if w.Start.After(ahead) {
			moved += w.N
			continue
		}
		near = append(near, w)
	}
	var at int
	switch {
	case len(near) == 2 && window.Equal(near[0].Start):
		// A clock just behind a boundary another one crossed: counted in
		// its own window, so no window by its clock admits more than its
		// limit, and judged by the newer one's count too.
		near[0].N += delta + moved
		n := near[0].N + near[1].N
		if near[0].N == 0 {
			near = near[1:]
		}
		return near, n
	case len(near) > 0 && !window.After(near[len(near)-1].Start):
		// The newest window, or a clock that lags or stepped back: counted
		// in the present. The window before the newest is kept to be read.
		at = len(near) - 1
	default:
		if len(near) == 2 {
			older, newest := near[0], near[1]
			gap := window.Sub(newest.Start)
			if gap > CountHorizon && gap > newest.Start.Sub(older.Start) {
				// Idle, or a clock that ran ahead: fold rather than drop,
				// so the present keeps its count if its clock is the
				// right one.
				newest.N += older.N
			}
			near = []CountWindow{newest}
		}
		near = append(near, CountWindow{Start: window})
		at = len(near) - 1
	}
	near[at].N += delta + moved
	n := near[at].N
	out := near[:0]
	for _, w := range near {
		if w.N != 0 {
			out = append(out, w)
		}
	}
	return out, n
}
