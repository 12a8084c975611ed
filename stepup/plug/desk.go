package plug

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
)

// Prompt is what an approver is shown and asked to sign.
type Prompt struct {
	Ticket stepup.Ticket
	// Card is the approval card, rendered by code from the stored effect;
	// CardJSON is the stored card model whose hash the challenge commits to.
	Card     *card.Card
	CardJSON []byte
	// Options is the approver's request (for passkeys,
	// PublicKeyCredentialRequestOptions JSON) whose challenge is Challenge.
	Options   json.RawMessage
	Challenge [32]byte
	// DenyOptions and DenyChallenge are the same for denying the ticket.
	DenyOptions   json.RawMessage
	DenyChallenge [32]byte
	// Approvers lists who may decide now: the ticket's user, or the
	// members of the approver group the policy names. Never empty.
	Approvers []string
	// Progress is who approved the ticket so far and who is awaited.
	Progress Progress
}

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

// GrantSpec is a delegated approval an approver asks to issue: what it
// covers, how often and until when.
type GrantSpec struct {
	// Grant is what it covers (package grant): an exact effect, a plan of
	// effects, or a template. A template must name the approver as its
	// User.
	Grant grant.Grant
	// Uses is how many calls an exact or template grant covers; zero for a
	// plan, whose steps are usable once each.
	Uses int
	// ExpiresAt ends the grant, used or not.
	ExpiresAt time.Time
}

// Runnable is a ticket [Gate.Execute] would run now: approved, unexpired,
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
