package desk

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// The dwell is judged only after the answer verified. Judged first, it
// answered anyone holding the ticket id (the agent) "too soon" until the
// dwell had passed and "bad answer" after, which says whether an
// approver has had the card on screen; now every answer that does not
// verify gets the same refusal, whenever it comes. An answer refused as
// too soon never counts later (core's Early): the approver signs again.

// signAgain tells an approver whose answer was refused as too soon what
// to do. A passkey that signs the same challenge to the same bytes gives
// the refused answer again (the challenge of a ticket never changes), so
// it cannot approve the ticket any more.
const signAgain = "wait until the card has been shown for the dwell time, then sign again. " +
	"If your passkey gives the same answer every time (some Ed25519 and RSA security keys do), " +
	"it cannot approve this ticket any more: ask another approver, or deny it and have the call proposed again"

// dwelt refuses answer, a verified approval of ticket a at now, that came
// too soon after the card was shown, or that was refused so before.
func (g *Gate) dwelt(ctx context.Context, a store.Approval, answer []byte, now time.Time) error {
	refused, early, err := g.core.Marks(ctx, a.ID, answer)
	switch {
	case err != nil:
		return err // fail closed: whether it was refused before is unknown
	case refused:
		return fmt.Errorf("%w: this answer was refused before (a look-alike picked, or a second person needed) and never counts; sign again", stepup.ErrBadAssertion)
	case early:
		return fmt.Errorf("%w: this answer was given too soon and never counts; %s", stepup.ErrTooFast, signAgain)
	}
	if err := g.Dwelt(a, now); err != nil {
		if merr := g.core.Early(ctx, a, answer); merr != nil {
			return merr // not kept for the other replicas: refused either way
		}
		return fmt.Errorf("%w; this answer never counts: %s", err, signAgain)
	}
	return nil
}

// DwellOf is the dwell time of ticket a's effect class (zero: none).
func (g *Gate) DwellOf(a store.Approval) time.Duration { return max(g.core.Dwell()[a.EffectClass], 0) }

// ShowFor implements [gate.Desk.ShowFor].
func (d *Desk) ShowFor(ctx context.Context, id stepup.TicketID) (plug.Showing, error) {
	a, _, now, err := d.pending(ctx, id, plug.ActionApprove)
	if err != nil {
		return plug.Showing{}, err
	}
	if err := d.g.Shown(ctx, a, now); err != nil {
		return plug.Showing{}, err
	}
	dwell := d.g.DwellOf(a)
	return plug.Showing{Dwell: dwell, Now: now, AcceptableAt: now.Add(dwell)}, nil
}
