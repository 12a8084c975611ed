package gate

import (
	"context"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/desk"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Desk is the approver's side of a gate: show a pending ticket, approve or
// deny it with an answer the [plug.Approver] verifies, revoke an approval, ask
// for a grant, get a receipt, list one's queue. It is never handed to the
// agent runtime; serve it on a listener and origin the agent API does not
// share.
type Desk struct{ d *desk.Desk }

// Desk returns the gate's approver side.
func (g *Gate) Desk() *Desk { return &Desk{d: desk.NewDesk(g.rt)} }

// Prompt returns what the approver of pending ticket id is shown: the card
// re-rendered from the stored effect (it must hash as stored, or the
// ticket is refused with [stepup.ErrEffectChanged]) and the requests to
// approve or deny it.
func (d *Desk) Prompt(ctx context.Context, id stepup.TicketID) (Prompt, error) {
	p, err := d.d.Prompt(ctx, id)
	return Prompt(p), err
}

// Show records that pending ticket id's card is on an approver's screen
// now: the first showing starts the dwell time ([WithDwell]) before an
// approval counts. Call it when the card is displayed, not when it is
// fetched: the approval page's script calls it once the card is in view,
// so a link preview or a prefetch does not start the wait. Of a ticket
// that needs several approvers, each approval clears the showing, so the
// next approver waits from when they are shown it.
func (d *Desk) Show(ctx context.Context, id stepup.TicketID) error {
	return d.d.Show(ctx, id)
}

// Approve verifies answer (for passkeys, the JSON of the browser's
// navigator.credentials.get) against pending ticket id and, when it
// verifies and its approver may decide the ticket, stores the ticket
// approved with the evidence and its audit row, in one transaction.
// Approving a [plug.GrantTool] ticket issues the grant.
func (d *Desk) Approve(ctx context.Context, id stepup.TicketID, answer []byte) (stepup.Ticket, error) {
	return d.d.Approve(ctx, id, answer)
}

// Deny verifies answer, signed over the ticket's deny challenge
// ([Prompt].DenyChallenge), and stores pending ticket id denied with
// reason (the approver's own words, kept in the audit row as one line of
// text of at most 512 bytes, invalid UTF-8 and control characters
// replaced: whatever it holds, the denial is made). A denial counts
// towards the session's lockout.
func (d *Desk) Deny(ctx context.Context, id stepup.TicketID, answer []byte, reason string) (stepup.Ticket, error) {
	return d.d.Deny(ctx, id, answer, reason)
}

// RevokePrompt returns what an approver of approved ticket id signs to
// revoke the approval before it runs: the ticket's deny request, which
// only someone who may decide the ticket can answer.
func (d *Desk) RevokePrompt(ctx context.Context, id stepup.TicketID) (Prompt, error) {
	p, err := d.d.RevokePrompt(ctx, id)
	return Prompt(p), err
}

// Revoke verifies answer, signed over approved ticket id's deny challenge
// ([Desk.RevokePrompt]) by someone who may decide the ticket, and revokes
// the approval before it runs. reason is kept as [Desk.Deny] keeps it.
func (d *Desk) Revoke(ctx context.Context, id stepup.TicketID, answer []byte, reason string) (stepup.Ticket, error) {
	return d.d.Revoke(ctx, id, answer, reason)
}

// Queue lists the pending, unexpired tickets approver may decide now,
// soonest expiry first, at most limit of them (0 means store's default
// page): the calls of their own agents that route to no group, those
// routed to every group they are in, and those escalated to one of those
// groups once their first stage has passed. It never lists a ticket the
// approver requested, nor one that needs several people and that the
// approver already approved.
func (d *Desk) Queue(ctx context.Context, approver string, limit int) ([]plug.Entry, error) {
	return d.d.Queue(ctx, approver, limit)
}

// List pages through the tickets matching f that approver may decide, or
// could revoke, now, in any state f names (pending, approved, executing,
// ...): the approver's own view, where [Admin.List] is the operator's.
// Pass the returned cursor as f.After for the next page; "" means the
// last. The store pages through every ticket matching f and the desk keeps
// those the approver may decide, so a page may hold fewer entries than
// f.Limit, even none, before the last; narrow f (f.User, f.Approvers) to
// read fewer. f.Session is refused with [stepup.ErrConfig]: a practice
// request ([WithPractice]) is told apart from a real one by nothing the
// desk shows or filters by, and its session is the one thing that would.
func (d *Desk) List(ctx context.Context, approver string, f store.Filter) ([]plug.Entry, string, error) {
	return d.d.List(ctx, approver, f)
}

// Grant asks user to issue a delegated approval of their own agents'
// calls. It returns a pending ticket of tool [plug.GrantTool] whose effect is
// the grant; user approves it like any other ticket, with [Desk.Prompt]
// and [Desk.Approve] and their passkey, so a grant exists only if
// the user's passkey signed exactly it, and its receipt is evidence like any
// approval's. When Approve verifies the assertion, it issues the grant, under
// the ticket's id, and returns the ticket executed; only user may approve it.
//
// Once issued, a call that names the grant ([stepup.Call].Grant) and that the
// policy says needs approval runs without asking, if the grant covers it
// (grant.Use: the user's own call, every argument covered, a use left,
// unexpired) and, when the tool routes to an approver group, the user is in
// that group. A grant never turns a denial into an allowance.
func (d *Desk) Grant(ctx context.Context, user string, spec GrantSpec) (stepup.Ticket, error) {
	return d.d.Grant(ctx, user, desk.GrantSpec(spec))
}

// Receipt returns the receipt of ticket id's approval, made by the
// approver (it must implement [Receipter]): for passkeys, the
// receipt.FormatV1 layout that anyone holding only the approver's public
// key verifies offline with receipt.Verify. The ticket must have been
// approved by a person; it may since have run, failed or expired. Of a
// ticket that needed several people, it is the receipt of the approval
// that completed the quorum; [Desk.QuorumReceipt] has them all.
func (d *Desk) Receipt(ctx context.Context, id stepup.TicketID) (*receipt.Receipt, error) {
	return d.d.Receipt(ctx, id)
}

// QuorumReceipt returns the receipts of every approval of ticket id, which
// needed several people (a [receipt.Quorum]): one receipt.FormatV1
// receipt per approver over the same challenge, which a third party
// checks offline with receipt.VerifyQuorum against the approvers' keys.
// A ticket one person approved has a quorum of one receipt.
func (d *Desk) QuorumReceipt(ctx context.Context, id stepup.TicketID) (*receipt.Quorum, error) {
	return d.d.QuorumReceipt(ctx, id)
}
