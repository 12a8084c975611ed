package plug

import (
	"errors"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// ErrNoReceipt means a ticket has no approval by a person to make a
// receipt of: it is pending, was denied, cancelled or timed out, was
// allowed by the policy or covered by a grant, or its approver makes no
// receipts.
var ErrNoReceipt = errors.New("gate: no approval by a person to make a receipt of")

// Entry is a ticket as an approver's queue or an operator's listing shows
// it.
type Entry struct {
	Ticket stepup.Ticket
	// User is who the call runs on behalf of; Agent proposed it.
	User, Agent string
	// Approvers names the approver group the policy routed the ticket to;
	// empty means the ticket's user decides it.
	Approvers string
	CreatedAt time.Time
	// Approved lists who already approved a ticket that needs several
	// people ([Decision.Quorum]), in order.
	Approved []string
	// Progress is who approved the ticket so far and who is awaited.
	Progress Progress
}

// Runnable is a ticket the gate's Execute would run now: approved, unexpired,
// unused, its approval verifying under the current policy, its stored
// effect still hashing to the approved digest with its references
// re-resolved.
type Runnable struct {
	ID        stepup.TicketID
	Digest    canon.Digest
	Effect    canon.Effect
	Approver  string
	Nonce     [32]byte
	ExpiresAt time.Time
	// Now is the store's time of the check.
	Now time.Time
}
