package gate

import (
	"context"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
)

// Progress returns where ticket id stands with its approvers, in any
// state: of a ticket that needs several people, the approvals that count
// now (an approval whose approver left the group or whose passkey was
// revoked since no longer does, and is listed in Dropped with why), and
// who may still approve it.
func (d *Desk) Progress(ctx context.Context, id stepup.TicketID) (plug.Progress, error) {
	return d.d.Progress(ctx, id)
}

// ShowFor is [Desk.Show] that also answers when an approval from the
// screen that showed the card becomes acceptable: the class's dwell from
// the gate's time of this showing. The answer is the same whether or not
// the card was shown before, so it tells whoever calls nothing about
// other screens; an approval at or after AcceptableAt is never refused as
// too soon, since the gate counts from the first showing, which is not
// later (unless another approver's approval of a ticket that needs
// several people clears the showing meanwhile: then show it again).
func (d *Desk) ShowFor(ctx context.Context, id stepup.TicketID) (plug.Showing, error) {
	return d.d.ShowFor(ctx, id)
}
