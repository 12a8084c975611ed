package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
)

// State is where a ticket is in its life; see the package documentation.
type State string

// The states of a ticket.
const (
	Pending   State = "pending"   // parked, waiting for an approver
	Approved  State = "approved"  // approved, not yet consumed
	Denied    State = "denied"    // an approver refused it
	Expired   State = "expired"   // nobody decided before ExpiresAt
	Cancelled State = "cancelled" // withdrawn
	Revoked   State = "revoked"   // approved, then revoked before it ran
	Executing State = "executing" // consumed; the intent to execute is recorded
	Done      State = "done"      // ran; the executor returned success
	Failed    State = "failed"    // ran; the executor returned an error
	Abandoned State = "abandoned" // consumed but never run (effect changed, no executor)
)

// Valid reports whether s is one of the ten states.
func (s State) Valid() bool {
	switch s {
	case Pending, Approved, Denied, Expired, Cancelled, Revoked, Executing, Done, Failed, Abandoned:
		return true
	}
	return false
}

// Terminal reports whether s is a state no ticket ever leaves: denied,
// expired, cancelled, revoked, done, failed or abandoned.
func (s State) Terminal() bool {
	switch s {
	case Denied, Expired, Cancelled, Revoked, Done, Failed, Abandoned:
		return true
	}
	return false
}

// Ran reports whether s is where a consumed ticket ends: done, failed or
// abandoned. Consume refuses such a ticket with [ErrConsumed].
func (s State) Ran() bool {
	return s == Done || s == Failed || s == Abandoned
}

// Approval is a ticket: one parked call, the descriptor that will run if it
// is approved, and what happened to it since.
type Approval struct {
	// ID is 128 random bits in hex ([NewID]); Park makes one when empty.
	ID    string
	State State

	// The stored descriptor. Execute runs Effect, never resubmitted
	// arguments; Digest is its canon digest.
	//
	// Effect and Card are immutable once parked: the caller of Park gives
	// them up, nobody writes into the Effect or Card of an Approval a store
	// returns, and a store may share both, by reference, between the
	// Approvals it keeps and returns. (The gate builds them fresh for each
	// Park and only reads them; Execute re-hashes the effect before it runs
	// and the evidence check re-hashes the card, so a write would be
	// refused, not run.) Every other slice is the caller's own.
	Effect      []byte       // canonical effect JSON
	Digest      canon.Digest // canon.Sum(Effect)
	Tool        string
	EffectClass string
	Card        []byte       // card model JSON the approver saw
	CardHash    canon.Digest // hash of Card, signed in the challenge
	Nonce       [32]byte     // from crypto/rand, signed in the challenge
	CreatedAt   time.Time
	ExpiresAt   time.Time

	// Who asked, and in what context.
	Requester     canon.Principal // the agent principal that proposed the call
	User          string          // the principal's user; pending caps count per user
	Session       string          // pending caps and merging count per session
	Task          string
	Step          string
	PolicyVersion string
	Taint         []string
	Rationale     string // agent-written text: untrusted
	// Approvers is the approver group the policy named; empty means only
	// the ticket's User may approve. Stored so listing can filter by it.
	Approvers string
	// EscalatesTo is the approver group that may decide the ticket too
	// once EscalatesAt has passed, when the policy's route escalates on
	// timeout; empty for none. Stored so the escalation group's queue
	// ([Tickets.Queue]) finds the ticket.
	EscalatesTo string
	EscalatesAt time.Time
	Merged      int // duplicates merged into this ticket by Park

	// ShownAt is when the ticket's card was first shown to an approver
	// ([Votes.Show]); zero until then.
	ShownAt time.Time

	// The decision.
	Approver   string
	Reason     string
	Evidence   []byte // raw WebAuthn assertion JSON, kept for the receipt
	ResolvedAt time.Time
	// Votes are the approvals of a ticket that needs several people
	// ([Votes.Vote]), in the order given; the ticket is approved when
	// they reach its quorum, and Approver is then the last of them.
	Votes []Vote

	// The execution.
	IdempotencyKey string    // the same at every run of this ticket
	ConsumedAt     time.Time // when Consume spent the approval
	Owner          string    // the gate instance executing it
	Fence          int64     // fencing token: 0 until consumed, 1 at Consume, +1 at each Reclaim
	LeaseUntil     time.Time // the owner's lease; reclaimable at or after it
	Result         []byte
	FinishedAt     time.Time // when it ran to its end, or was revoked
}

// Clone returns a deep copy of a, sharing no slices with it.
func (a Approval) Clone() Approval {
	cloneBytesOf(&a.Effect, &a.Card, &a.Evidence, &a.Result)
	a.Taint = cloneStrings(a.Taint)
	a.Requester.Delegations = cloneStrings(a.Requester.Delegations)
	if a.Votes != nil {
		votes := make([]Vote, len(a.Votes))
		for i, v := range a.Votes {
			v.Evidence = cloneBytes(v.Evidence)
			votes[i] = v
		}
		a.Votes = votes
	}
	return a
}

// Vote is one person's approval of a ticket that needs several.
type Vote struct {
	Approver string
	Evidence []byte // the approver's evidence, as the gate keeps it
	At       time.Time
}

// MaxQuorum bounds how many distinct approvals a ticket may need.
const MaxQuorum = 16

// Caps bounds the live pending tickets Park admits. Zero means no cap.
type Caps struct {
	PerSession int
	PerUser    int
}

// Resolution is an approver's (or the gate's) decision on a pending
// ticket, or the revocation of an approved one.
type Resolution struct {
	To       State // Approved, Denied, Expired or Cancelled; Revoked for an approved ticket
	Approver string
	Reason   string
	Evidence []byte // raw WebAuthn assertion JSON, or the gate's MAC
	At       time.Time
}

// Claim is a gate instance taking an approved ticket to execute
// ([Execution.Consume]) or taking over one whose lease expired
// ([Execution.Reclaim]).
type Claim struct {
	Key        string    // the idempotency key; Reclaim keeps the stored one
	Owner      string    // the gate instance that will run it
	At         time.Time // now, by the caller's reading of the store's clock
	LeaseUntil time.Time // the lease, after At
}

// Outcome is how an execution ended ([Execution.Finish]).
type Outcome struct {
	State  State // Done, Failed or Abandoned
	Result []byte
	At     time.Time
}

// Bounds of a [Filter]'s page size.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// Filter selects tickets for [Tickets.List]. Empty fields match
// everything; set fields must all match.
type Filter struct {
	States    []State // any of these; empty means every state
	User      string
	Session   string
	Approvers string
	// Limit is the page size: 0 means [DefaultListLimit], more than
	// [MaxListLimit] means MaxListLimit.
	Limit int
	// After is the cursor: the last ID of the previous page, "" for the
	// first page.
	After string
}

// PageSize returns the number of tickets a page of f holds.
func (f Filter) PageSize() int {
	switch {
	case f.Limit <= 0:
		return DefaultListLimit
	case f.Limit > MaxListLimit:
		return MaxListLimit
	}
	return f.Limit
}

// Credential is an approver's WebAuthn credential.
type Credential struct {
	ID             []byte // credential id, unique
	User           string
	PublicKey      []byte // COSE_Key
	SignCount      uint32
	BackupEligible bool
	BackupState    bool
	AAGUID         []byte
	CreatedAt      time.Time
	RevokedAt      time.Time // zero unless revoked; a revoked credential never approves
	// Seal is the enrolling side's MAC over the credential (package
	// passkey seals what it enrolls), so that a credential written into
	// the database by anyone else does not approve. Stored as given.
	Seal []byte
}

// Clone returns a deep copy of c.
func (c Credential) Clone() Credential {
	c.ID = cloneBytes(c.ID)
	c.PublicKey = cloneBytes(c.PublicKey)
	c.AAGUID = cloneBytes(c.AAGUID)
	c.Seal = cloneBytes(c.Seal)
	return c
}

// Invite lets one user enroll one credential. Only the hash of the token
// is stored, so a leaked store does not leak usable invites.
type Invite struct {
	TokenHash  [32]byte // SHA-256 of the secret token handed to the user
	User       string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	RedeemedAt time.Time // zero until redeemed
	RevokedAt  time.Time // zero unless revoked before it was redeemed
}

// CountOp is one operation of [Counters.AddCounts]: add Delta to the
// counter (Key, Window); a Delta of 0 reads it.
type CountOp struct {
	Key    string
	Window time.Time
	Delta  int64
}

// MaxCountOps bounds the ops of one [Counters.AddCounts]: enough for an
// admission naming flood's most approvers, two ops per rate.
const MaxCountOps = 1024

// CheckCountOps reports whether ops may be applied: at most
// [MaxCountOps], each key well formed ([CheckKey]).
func CheckCountOps(ops []CountOp) error {
	if len(ops) > MaxCountOps {
		return fmt.Errorf("%w: over %d counter operations", ErrInvalid, MaxCountOps)
	}
	for _, op := range ops {
		if err := CheckKey(op.Key); err != nil {
			return err
		}
	}
	return nil
}

// Streak is a run of consecutive events, such as denials, for lockouts.
type Streak struct {
	Count int
	Last  time.Time // time of the latest increment
}

// StreakReader is implemented by [Counters] that read several streaks in
// one round trip to the database. [GetStreaks] uses it when it is there.
type StreakReader interface {
	// GetStreaks returns the streaks of keys in their order, each as
	// [Counters.GetStreak] returns it (an unknown key is the zero
	// Streak), all read at one moment. At most [MaxCountOps] keys, each
	// well formed ([CheckKey]); a key may repeat.
	GetStreaks(ctx context.Context, keys []string) ([]Streak, error)
}

// CheckStreakKeys reports whether keys may be read in one
// [StreakReader.GetStreaks]: at most [MaxCountOps] of them, each well
// formed.
func CheckStreakKeys(keys []string) error {
	if len(keys) > MaxCountOps {
		return fmt.Errorf("%w: over %d streak keys", ErrInvalid, MaxCountOps)
	}
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return err
		}
	}
	return nil
}

// GetStreaks reads the streaks of keys from c in their order: in one call
// when c is a [StreakReader], and otherwise with one [Counters.GetStreak]
// per key.
func GetStreaks(ctx context.Context, c Counters, keys []string) ([]Streak, error) {
	if r, ok := c.(StreakReader); ok {
		return r.GetStreaks(ctx, keys)
	}
	if err := CheckStreakKeys(keys); err != nil {
		return nil, err
	}
	out := make([]Streak, len(keys))
	for i, k := range keys {
		st, err := c.GetStreak(ctx, k)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

// Grant is a delegated approval with a number of uses. Spec is opaque here;
// the grant package interprets it.
type Grant struct {
	ID        string
	User      string
	Spec      []byte // JSON
	Remaining int
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt time.Time // zero unless revoked; a revoked grant is never used
}

// Clone returns a deep copy of g.
func (g Grant) Clone() Grant {
	g.Spec = cloneBytes(g.Spec)
	return g
}

// cloneBytesOf points each of bs at a copy of its bytes, all copies in
// one new array, each with its capacity capped at its length so that
// appending to one never writes into the next. Nil stays nil, empty
// stays empty.
func cloneBytesOf(bs ...*[]byte) {
	n := 0
	for _, b := range bs {
		n += len(*b)
	}
	buf := make([]byte, 0, n)
	for _, b := range bs {
		if *b == nil {
			continue
		}
		at := len(buf)
		buf = append(buf, *b...)
		*b = buf[at:len(buf):len(buf)]
	}
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}
