package gate

import (
	"context"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
)

// Progress is where a ticket stands with its approvers: how many it
// needs, whose approvals count (and when), which no longer do and why,
// and who is awaited. [Prompt] and [Entry] carry it.
type Progress = plug.Progress

// Signature is one approval of a ticket that counts.
type Signature = plug.Signature

// Dropped is one approval that no longer counts, and why.
type Dropped = plug.Dropped

// Showing is what showing a card starts: the dwell time, and when an
// approval from that screen becomes acceptable ([Desk.ShowFor]).
type Showing = plug.Showing

// The refusals of an answer that verified but may not approve, each told
// apart so the approver is told what to do. Each wraps
// [stepup.ErrNotPermitted], or [stepup.ErrRevoked] for a revoked passkey.
var (
	// ErrAlreadyApproved: the approver already approved this ticket,
	// which needs someone else now.
	ErrAlreadyApproved = plug.ErrAlreadyApproved
	// ErrOwnRequest: the approver requested the call; another person must
	// approve it.
	ErrOwnRequest = plug.ErrOwnRequest
	// ErrNotYours: the approver may not decide this ticket.
	ErrNotYours = plug.ErrNotYours
	// ErrPasskeyRevoked: the answer's passkey was revoked.
	ErrPasskeyRevoked = plug.ErrPasskeyRevoked
)

// Progress returns where ticket id stands with its approvers, in any
// state: of a ticket that needs several people, the approvals that count
// now (an approval whose approver left the group or whose passkey was
// revoked since no longer does, and is listed in Dropped with why), and
// who may still approve it.
func (d *Desk) Progress(ctx context.Context, id stepup.TicketID) (Progress, error) {
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
func (d *Desk) ShowFor(ctx context.Context, id stepup.TicketID) (Showing, error) {
	return d.d.ShowFor(ctx, id)
}
