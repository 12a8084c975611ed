package gate

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/gate/internal/desk"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Renderer draws the approval card of a sealed effect from trusted
// context only; card.Renderer is the default, and [WithRenderer] plugs in
// another (a localized or branded card, built with card.Custom). The gate
// hashes whatever card the renderer returns, stores that card's JSON and
// puts its hash in the challenge the approver signs (P4): what the
// approver was shown is what the passkey signed, and a card that does not
// render again as stored is refused. The card's JSON names the renderer,
// so the hash covers its identity.
type Renderer interface {
	RenderSealed(s canon.Sealed, c card.Context) (*card.Card, error)
}

// Flood admits the calls that would prompt a person and learns how people
// decided them; *flood.Limiter is the default, and [WithFlood] plugs in
// another. Admit refuses with a *flood.LimitError (rate limited or locked
// out, with a retry time) or any other error, which the gate treats as a
// refusal. Every call that would ask a person passes Admit, and every
// decision a person makes (approve, deny) is told to Decided.
type Flood interface {
	Admit(ctx context.Context, r flood.Request) error
	Decided(ctx context.Context, r flood.Request, approved bool) error
	// Caps bounds the live pending tickets per session and per user,
	// enforced by the store when it parks a ticket.
	Caps() store.Caps
}

// Receipter is an optional capability of a plug.Approver: a portable
// receipt of an approval it verified, which a third party checks offline
// (receipt.Verify). [Desk.Receipt] uses it.
type Receipter interface {
	Receipt(ctx context.Context, a plug.Answer) (*receipt.Receipt, error)
}

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
	Progress plug.Progress
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

// The gate's contracts are the internal parts' contracts, and its values
// convert to theirs field for field; these fail to compile otherwise.
var (
	_ core.Renderer  = Renderer(nil)
	_ Renderer       = core.Renderer(nil)
	_ core.Flood     = Flood(nil)
	_ Flood          = core.Flood(nil)
	_ core.Receipter = Receipter(nil)
	_ Receipter      = core.Receipter(nil)
	_                = Prompt(desk.Prompt{})
	_                = desk.GrantSpec(GrantSpec{})
	_ Renderer       = card.Renderer{}
)
