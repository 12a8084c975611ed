package gate

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/gate/internal/desk"
)

// WithConfirmation makes the approvers of tickets of the effect classes
// named (card.ClassExternal, card.ClassIrreversible, ...) pick the
// effect's key value before their passkey answer counts: the registrable
// domain of the first recipient the card shows, or else the amount, out
// of four options of which three are look-alikes (rn for m, a letter
// doubled or dropped, another top-level domain; a digit more, less or
// transposed). A ticket whose card shows neither is approved as usual.
//
// The options are drawn from the ticket's id and its secret nonce, so
// every replica offers the same ones in the same order; the right one's
// place is random per ticket and never reaches the agent's side. The
// pick is checked by the gate before the passkey answer is verified: a
// wrong pick never approves, is recorded as an audit.DecisionMisconfirmed
// row and counted in the figures, and the card is shown again.
//
// The pick is not in the signed challenge: the challenge and the
// receipt keep their format, so receipts verify as before. That
// suffices because the pick is not authority but attention: the
// passkey answer alone says who approved exactly this effect, and the
// gate refuses to count it without the right pick, which only the
// approval page holds (it is a hash of the nonce, which the agent never
// sees).
func WithConfirmation(classes ...string) Option {
	return option(func(g *core.Config) error {
		if len(classes) == 0 {
			return fmt.Errorf("%w: confirmation needs at least one effect class", stepup.ErrConfig)
		}
		if g.Confirm == nil {
			g.Confirm = map[string]bool{}
		}
		for _, c := range classes {
			switch c {
			case card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible:
				g.Confirm[c] = true
			default:
				return fmt.Errorf("%w: confirmation for unknown effect class %q", stepup.ErrConfig, c)
			}
		}
		return nil
	})
}

// Confirmation is what the approver of a ticket picks from before
// approving it ([WithConfirmation]).
type Confirmation struct {
	// Asks names what is picked: "recipient domain" or "amount".
	Asks string
	// Choices are the options, in the order to show them; exactly one is
	// the card's own. None when the ticket needs no pick.
	Choices []Choice
}

// Choice is one option of a [Confirmation].
type Choice struct {
	// Text is the value as the approver reads it.
	Text string
	// Pick is what the page posts when the approver picks Text
	// ([Desk.ApprovePicked]); it says nothing of which option is right.
	Pick string
}

// Confirmation returns the options the approver of pending ticket id
// picks the effect's key value from before approving it; no choices
// when its class needs no pick ([WithConfirmation]). Serve it only to
// the approver's page, never to the agent.
func (d *Desk) Confirmation(ctx context.Context, id stepup.TicketID) (Confirmation, error) {
	c, err := d.d.Confirmation(ctx, id)
	out := Confirmation{Asks: c.Asks}
	for _, ch := range c.Choices {
		out.Choices = append(out.Choices, Choice(ch))
	}
	return out, err
}

// ApprovePicked is [Desk.Approve] with the approver's pick (a
// [Choice].Pick of [Desk.Confirmation]): the gate checks the pick first,
// and a wrong one is refused with [plug.ErrWrongPick] and recorded, whatever
// the answer. Of a ticket that needs no pick, the pick is ignored.
func (d *Desk) ApprovePicked(ctx context.Context, id stepup.TicketID, pick string, answer []byte) (stepup.Ticket, error) {
	return d.d.ApprovePicked(ctx, id, pick, answer)
}

var _ = Choice(desk.Choice{})
