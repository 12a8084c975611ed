package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Desk is the approver's side of a gate: show a pending ticket, approve or
// deny it with an answer the [Approver] verifies, revoke an approval, ask
// for a grant, get a receipt, list one's queue. It is never handed to the
// agent runtime; serve it on a listener and origin the agent API does not
// share.
type Desk struct{ g *Gate }

// Desk returns the gate's approver side.
func (g *Gate) Desk() *Desk { return &Desk{g: g} }

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
}

// ErrNoReceipt means a ticket has no approval by a person to make a
// receipt of: it is pending, was denied, cancelled or timed out, was
// allowed by the policy or covered by a grant, or its approver makes no
// receipts.
var ErrNoReceipt = errors.New("gate: no approval by a person to make a receipt of")

// Prompt returns what the approver of pending ticket id is shown: the card
// re-rendered from the stored effect (it must hash as stored, or the
// ticket is refused with [stepup.ErrEffectChanged]) and the requests to
// approve or deny it.
func (d *Desk) Prompt(ctx context.Context, id stepup.TicketID) (Prompt, error) {
	a, req, now, err := d.pending(ctx, id, ActionApprove)
	if err != nil {
		return Prompt{}, err
	}
	dec, s, err := d.g.redecide(ctx, a)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	if !s.Digest().Equal(a.Digest) {
		return Prompt{}, fmt.Errorf("prompt: %w", stepup.ErrEffectChanged)
	}
	cd, err := d.g.render(s, dec, a.Taint, a.Rationale)
	if err != nil || !cd.Hash().Equal(a.CardHash) {
		return Prompt{}, fmt.Errorf("prompt: %w: the card no longer renders as stored", stepup.ErrEffectChanged)
	}
	opts, err := d.g.approver.Options(ctx, req)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	denyReq := newRequest(ActionDeny, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, req.Approvers)
	denyOpts, err := d.g.approver.Options(ctx, denyReq)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	return Prompt{Ticket: view(a, now), Card: cd, CardJSON: a.Card, Options: opts,
		Challenge: req.Challenge, DenyOptions: denyOpts, DenyChallenge: denyReq.Challenge,
		Approvers: req.Approvers}, nil
}

// Show records that pending ticket id's card is on an approver's screen
// now: the first showing starts the dwell time ([WithDwell]) before an
// approval counts. Call it when the card is displayed, not when it is
// fetched: the approval page's script calls it once the card is in view,
// so a link preview or a prefetch does not start the wait. Of a ticket
// that needs several approvers, each approval clears the showing, so the
// next approver waits from when they are shown it.
func (d *Desk) Show(ctx context.Context, id stepup.TicketID) error {
	a, _, now, err := d.pending(ctx, id, ActionApprove)
	if err != nil {
		return err
	}
	return d.g.shown(ctx, a, now)
}

// pending reads a pending, unexpired ticket and builds the request of
// action about it, timing it out if it expired.
func (d *Desk) pending(ctx context.Context, id stepup.TicketID, action Action) (store.Approval, Request, time.Time, error) {
	g := d.g
	a, err := g.load(ctx, "approval", id)
	if err != nil {
		return a, Request{}, time.Time{}, err
	}
	now, err := g.now(ctx)
	if err != nil {
		return a, Request{}, now, err
	}
	if a.State != store.Pending {
		if a.State == store.Expired || (a.State == store.Cancelled && !now.Before(a.ExpiresAt)) {
			return a, Request{}, now, fmt.Errorf("approval: %w", stepup.ErrExpired)
		}
		return a, Request{}, now, fmt.Errorf("approval: %w", stepup.ErrResolved)
	}
	if !now.Before(a.ExpiresAt) {
		if err := g.timeout(ctx, a); err != nil {
			return a, Request{}, now, err
		}
		return a, Request{}, now, fmt.Errorf("approval: %w", stepup.ErrExpired)
	}
	route, err := g.route(ctx, a)
	if err != nil {
		return a, Request{}, now, fmt.Errorf("approval: %w", err)
	}
	approvers, err := g.routeOf(a, route, now)
	if err != nil {
		return a, Request{}, now, fmt.Errorf("approval: %w", err)
	}
	req := newRequest(action, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, approvers)
	req.Quorum = quorumOf(route)
	for _, v := range a.Votes {
		req.Approved = append(req.Approved, v.Approver)
	}
	return a, req, now, nil
}

// Approve verifies answer (for passkeys, the JSON of the browser's
// navigator.credentials.get) against pending ticket id and, when it
// verifies and its approver may decide the ticket, stores the ticket
// approved with the evidence and its audit row, in one transaction.
// Approving a [GrantTool] ticket issues the grant.
func (d *Desk) Approve(ctx context.Context, id stepup.TicketID, answer []byte) (stepup.Ticket, error) {
	g := d.g
	a, req, now, err := d.pending(ctx, id, ActionApprove)
	if err != nil {
		return stepup.Ticket{}, err
	}
	// Before the answer is verified, so a refusal moves no signature
	// counter: the approver answers again once they have read the card.
	if err := g.dwelt(a, now); err != nil {
		return stepup.Ticket{}, fmt.Errorf("approve: %w", err)
	}
	v, err := g.verify(ctx, req, a, answer)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("approve: %w", err)
	}
	if req.Quorum > 1 {
		return g.vote(ctx, a, v, req.Quorum)
	}
	reason := "approved by " + v.User
	var done store.Approval
	err = g.atNow(ctx, func(at time.Time) (err error) {
		now = at
		done, err = g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: v.User,
			Reason: reason, Evidence: g.sealAnswer(a, v.User, v.Evidence), At: at},
			g.note(receipt.DecisionApproved, reason, at))
		return err
	})
	if err != nil {
		return stepup.Ticket{}, ticketErr("approve", err)
	}
	g.changed()
	g.observeDecided(ctx, done, receipt.DecisionApproved, reason, now)
	if a.Tool == GrantTool {
		return g.issueGrant(context.WithoutCancel(ctx), done)
	}
	_ = g.decided(ctx, done, true)
	return view(done, now), nil
}

// Deny verifies answer, signed over the ticket's deny challenge
// ([Prompt].DenyChallenge), and stores pending ticket id denied with
// reason (the approver's own words, kept in the audit row). A denial
// counts towards the session's lockout.
func (d *Desk) Deny(ctx context.Context, id stepup.TicketID, answer []byte, reason string) (stepup.Ticket, error) {
	g := d.g
	a, req, _, err := d.pending(ctx, id, ActionDeny)
	if err != nil {
		return stepup.Ticket{}, err
	}
	v, err := g.verify(ctx, req, a, answer)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("deny: %w", err)
	}
	now, err := g.now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	why := "denied by " + v.User
	if reason = strings.TrimSpace(reason); reason != "" {
		why += ": " + reason
	}
	done, err := g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Denied, Approver: v.User, Reason: why,
		Evidence: v.Evidence, At: now}, g.note(receipt.DecisionDenied, why, now))
	if err != nil {
		return stepup.Ticket{}, ticketErr("deny", err)
	}
	g.changed()
	g.observeDecided(ctx, done, receipt.DecisionDenied, "denied by "+v.User, now)
	if a.Tool != GrantTool {
		if err := g.decided(ctx, done, false); err != nil {
			return view(done, now), err
		}
	}
	return view(done, now), nil
}

// verify checks an answer through the approver and that its approver may
// decide the ticket.
func (g *Gate) verify(ctx context.Context, req Request, a store.Approval, answer []byte) (Verified, error) {
	v, err := g.approver.Verify(ctx, req, answer)
	if err != nil {
		return Verified{}, err
	}
	if err := mayDecide(v.User, a); err != nil {
		return Verified{}, err
	}
	if !slices.Contains(req.Approvers, v.User) {
		return Verified{}, fmt.Errorf("%w: not an approver of this ticket", stepup.ErrNotPermitted)
	}
	return v, nil
}

// Receipt returns the receipt of ticket id's approval, made by the
// approver (it must implement [Receipter]): for passkeys, the
// receipt.FormatV1 layout that anyone holding only the approver's public
// key verifies offline with receipt.Verify. The ticket must have been
// approved by a person; it may since have run, failed or expired. Of a
// ticket that needed several people, it is the receipt of the approval
// that completed the quorum; [Desk.QuorumReceipt] has them all.
func (d *Desk) Receipt(ctx context.Context, id stepup.TicketID) (*receipt.Receipt, error) {
	a, r, err := d.receipter(ctx, id)
	if err != nil {
		return nil, err
	}
	if n := len(a.Votes); n > 0 {
		last := a.Votes[n-1]
		evidence, err := d.g.openAnswerOf(a, last.Approver, last.Evidence)
		if err != nil {
			return nil, fmt.Errorf("receipt: %w", err)
		}
		return r.Receipt(ctx, answerFor(a, last.Approver, evidence, last.At))
	}
	evidence, err := d.g.openAnswer(a)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return r.Receipt(ctx, answerOf(a, evidence))
}

// QuorumReceipt returns the receipts of every approval of ticket id, which
// needed several people (a [receipt.Quorum]): one receipt.FormatV1
// receipt per approver over the same challenge, which a third party
// checks offline with receipt.VerifyQuorum against the approvers' keys.
// A ticket one person approved has a quorum of one receipt.
func (d *Desk) QuorumReceipt(ctx context.Context, id stepup.TicketID) (*receipt.Quorum, error) {
	a, r, err := d.receipter(ctx, id)
	if err != nil {
		return nil, err
	}
	q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: max(len(a.Votes), 1)}
	if len(a.Votes) == 0 {
		one, err := d.Receipt(ctx, id)
		if err != nil {
			return nil, err
		}
		q.Receipts = []*receipt.Receipt{one}
		return q, nil
	}
	for _, v := range a.Votes {
		evidence, err := d.g.openAnswerOf(a, v.Approver, v.Evidence)
		if err != nil {
			return nil, fmt.Errorf("receipt: %w", err)
		}
		one, err := r.Receipt(ctx, answerFor(a, v.Approver, evidence, v.At))
		if err != nil {
			return nil, fmt.Errorf("receipt: %w", err)
		}
		q.Receipts = append(q.Receipts, one)
	}
	return q, nil
}

// receipter loads ticket id, approved by people, and the approver that
// makes its receipts.
func (d *Desk) receipter(ctx context.Context, id stepup.TicketID) (store.Approval, Receipter, error) {
	a, err := d.g.load(ctx, "receipt", id)
	if err != nil {
		return a, nil, err
	}
	switch a.State {
	case store.Approved, store.Executing, store.Done, store.Failed:
	default:
		return a, nil, fmt.Errorf("receipt: %w: ticket is %s", ErrNoReceipt, a.State)
	}
	if reservedApprover(a.Approver) || (len(a.Evidence) == 0 && len(a.Votes) == 0) {
		return a, nil, fmt.Errorf("receipt: %w: no person approved this ticket", ErrNoReceipt)
	}
	r, ok := d.g.approver.(Receipter)
	if !ok {
		return a, nil, fmt.Errorf("receipt: %w: the approver makes no receipts", ErrNoReceipt)
	}
	return a, r, nil
}
