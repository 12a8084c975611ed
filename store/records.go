package store

import (
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
	Executing State = "executing" // consumed; the intent to execute is recorded
	Done      State = "done"      // executed, result recorded
)

// Valid reports whether s is one of the seven states.
func (s State) Valid() bool {
	switch s {
	case Pending, Approved, Denied, Expired, Cancelled, Executing, Done:
		return true
	}
	return false
}

// Approval is a ticket: one parked call, the descriptor that will run if it
// is approved, and what happened to it since.
type Approval struct {
	// ID is 128 random bits in hex ([NewID]); Park makes one when empty.
	ID    string
	State State

	// The stored descriptor. Execute runs Effect, never resubmitted
	// arguments; Digest is its canon digest.
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
	Merged        int    // duplicates merged into this ticket by Park

	// The decision.
	Approver   string
	Reason     string
	Evidence   []byte // raw WebAuthn assertion JSON, kept for the receipt
	ResolvedAt time.Time

	// The execution.
	IdempotencyKey string
	ConsumedAt     time.Time
	Result         []byte
	FinishedAt     time.Time
}

// Clone returns a deep copy of a, sharing no slices with it.
func (a Approval) Clone() Approval {
	a.Effect = cloneBytes(a.Effect)
	a.Card = cloneBytes(a.Card)
	a.Evidence = cloneBytes(a.Evidence)
	a.Result = cloneBytes(a.Result)
	a.Taint = cloneStrings(a.Taint)
	a.Requester.Delegations = cloneStrings(a.Requester.Delegations)
	return a
}

// Caps bounds the live pending tickets Park admits. Zero means no cap.
type Caps struct {
	PerSession int
	PerUser    int
}

// Resolution is an approver's (or the gate's) decision on a pending ticket.
type Resolution struct {
	To       State // Approved, Denied, Expired or Cancelled
	Approver string
	Reason   string
	Evidence []byte // raw WebAuthn assertion JSON
	At       time.Time
}

// Filter selects pending tickets. Empty fields match everything; set fields
// must all match.
type Filter struct {
	Session string
	User    string
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
}

// Clone returns a deep copy of c.
func (c Credential) Clone() Credential {
	c.ID = cloneBytes(c.ID)
	c.PublicKey = cloneBytes(c.PublicKey)
	c.AAGUID = cloneBytes(c.AAGUID)
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
}

// Streak is a run of consecutive events, such as denials, for lockouts.
type Streak struct {
	Count int
	Last  time.Time // time of the latest increment
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
}

// Clone returns a deep copy of g.
func (g Grant) Clone() Grant {
	g.Spec = cloneBytes(g.Spec)
	return g
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
