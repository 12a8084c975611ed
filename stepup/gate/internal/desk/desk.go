package desk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/gate/internal/run"
	"github.com/agentstepup/asu/stepup/internal/freetext"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Desk is the approvers' side of a gate (package gate's Desk).
type Desk struct{ g *Gate }

// NewDesk returns the approvers' side of g.
func NewDesk(g *run.Gate) *Desk { return &Desk{g: newGate(g)} }

// Prompt implements [gate.Desk.Prompt].
func (d *Desk) Prompt(ctx context.Context, id stepup.TicketID) (Prompt, error) {
	a, req, now, err := d.pending(ctx, id, plug.ActionApprove)
	if err != nil {
		return Prompt{}, err
	}
	dec, s, err := d.g.core.Redecide(ctx, a)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	if !s.Digest().Equal(a.Digest) {
		return Prompt{}, fmt.Errorf("prompt: %w", stepup.ErrEffectChanged)
	}
	cd, err := d.g.core.Render(s, dec, a.Taint, a.Rationale)
	if core.Misbehaviour(err) != "" {
		return Prompt{}, fmt.Errorf("prompt: %w", err) // the renderer's fault, not the effect's
	}
	if err != nil || !cd.Hash().Equal(a.CardHash) {
		return Prompt{}, fmt.Errorf("prompt: %w: the card no longer renders as stored", stepup.ErrEffectChanged)
	}
	opts, err := d.g.core.Approver().Options(ctx, req)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	denyReq := core.NewRequest(plug.ActionDeny, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, req.Approvers)
	denyReq.Challenge = core.Tagged(a, denyReq.Challenge)
	denyOpts, err := d.g.core.Approver().Options(ctx, denyReq)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	p := Prompt{Ticket: core.View(a, now), Card: cd, CardJSON: a.Card, Options: opts,
		Challenge: req.Challenge, DenyOptions: denyOpts, DenyChallenge: denyReq.Challenge,
		Approvers: req.Approvers}
	if p.Progress, err = d.promptProgress(ctx, a, now); err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	return p, nil
}

// Show implements [gate.Desk.Show].
func (d *Desk) Show(ctx context.Context, id stepup.TicketID) error {
	a, _, now, err := d.pending(ctx, id, plug.ActionApprove)
	if err != nil {
		return err
	}
	return d.g.Shown(ctx, a, now)
}

// pending reads a pending, unexpired ticket and builds the request of
// action about it, timing it out if it expired.
func (d *Desk) pending(ctx context.Context, id stepup.TicketID, action plug.Action) (store.Approval, plug.Request, time.Time, error) {
	g := d.g
	a, _, err := g.core.Load(ctx, "approval", id)
	if err != nil {
		return a, plug.Request{}, time.Time{}, err
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return a, plug.Request{}, now, err
	}
	if a, err = g.run.Lapse(ctx, a, now); err != nil { // a quorum short of its votes is pending again
		return a, plug.Request{}, now, err
	}
	if a.State != store.Pending {
		if a.State == store.Expired || (a.State == store.Cancelled && !now.Before(a.ExpiresAt)) {
			return a, plug.Request{}, now, fmt.Errorf("approval: %w", stepup.ErrExpired)
		}
		return a, plug.Request{}, now, fmt.Errorf("approval: %w", stepup.ErrResolved)
	}
	if !now.Before(a.ExpiresAt) {
		if err := g.run.ExpireTicket(ctx, a); err != nil {
			return a, plug.Request{}, now, err
		}
		return a, plug.Request{}, now, fmt.Errorf("approval: %w", stepup.ErrExpired)
	}
	route, err := g.core.Route(ctx, a)
	if err != nil {
		return a, plug.Request{}, now, fmt.Errorf("approval: %w", err)
	}
	approvers, err := g.core.Deciders(a, route, now)
	if err != nil {
		return a, plug.Request{}, now, fmt.Errorf("approval: %w", err)
	}
	req := core.NewRequest(action, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, approvers)
	req.Challenge = core.Tagged(a, req.Challenge) // a practice request's own (practice.go)
	req.Quorum = core.QuorumOf(route)
	for _, v := range a.Votes {
		req.Approved = append(req.Approved, v.Approver)
	}
	return a, req, now, nil
}

// Approve implements [gate.Desk.Approve].
func (d *Desk) Approve(ctx context.Context, id stepup.TicketID, answer []byte) (stepup.Ticket, error) {
	g := d.g
	a, req, now, err := d.pending(ctx, id, plug.ActionApprove)
	if err != nil {
		return stepup.Ticket{}, err
	}
	if err := g.confirmed(ctx, d, a, req, answer); err != nil { // confirm.go
		return stepup.Ticket{}, err
	}
	v, err := g.verify(ctx, req, a, answer)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("approve: %w", err)
	}
	if err := g.dwelt(ctx, a, answer, now); err != nil { // only after the answer verified: see early.go
		return stepup.Ticket{}, fmt.Errorf("approve: %w", err)
	}
	if core.IsPractice(a) {
		return g.practiced(ctx, a, v, true) // practice.go
	}
	second := g.core.SecondPersonNeeded
	if a.Tool == plug.GrantTool {
		// A grant approves, later and alone, the calls it covers: the
		// rule holds it to their classes, not to its own.
		second = func(ctx context.Context, user, _ string) error { return g.core.SecondPersonNeededForGrant(ctx, user) }
	}
	if err := second(ctx, v.User, a.EffectClass); err != nil {
		// The answer verified; posted again once a second person is no
		// longer needed, it must not count (see core.Gate.Refused).
		if errors.Is(err, plug.ErrSecondPersonNeeded) {
			if merr := g.core.Refused(context.WithoutCancel(ctx), a, answer); merr != nil {
				return stepup.Ticket{}, fmt.Errorf("approve: %w; %w", err, merr)
			}
		}
		return stepup.Ticket{}, fmt.Errorf("approve: %w", err)
	}
	if req.Quorum > 1 {
		return g.vote(ctx, a, v, req.Quorum, now)
	}
	reason := "approved by " + v.User
	var done store.Approval
	err = g.core.AtNow(ctx, func(at time.Time) (err error) {
		now = at
		done, err = g.core.St().Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: v.User,
			Reason: reason, Evidence: g.core.SealAnswer(a, v.User, v.Evidence), At: at},
			g.core.Note(audit.DecisionApproved, reason, at))
		return err
	})
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("approve", err)
	}
	g.core.Changed(done.ID)
	g.core.ObserveDecided(ctx, done, audit.DecisionApproved, reason, now)
	if a.Tool == plug.GrantTool {
		return g.run.IssueGrant(context.WithoutCancel(ctx), done)
	}
	_ = g.core.Decided(ctx, done, true)
	return core.View(done, now), nil
}

// Deny implements [gate.Desk.Deny].
func (d *Desk) Deny(ctx context.Context, id stepup.TicketID, answer []byte, reason string) (stepup.Ticket, error) {
	g := d.g
	a, req, _, err := d.pending(ctx, id, plug.ActionDeny)
	if err != nil {
		return stepup.Ticket{}, err
	}
	v, err := g.verify(ctx, req, a, answer)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("deny: %w", err)
	}
	if core.IsPractice(a) {
		return g.practiced(ctx, a, v, false) // practice.go
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	why := "denied by " + v.User
	if reason = freetext.Reason(reason); reason != "" { // the reason never decides whether the denial is made
		why += ": " + reason
	}
	done, err := g.core.St().Resolve(ctx, a.ID, store.Resolution{To: store.Denied, Approver: v.User, Reason: why,
		Evidence: v.Evidence, At: now}, g.core.Note(audit.DecisionDenied, why, now))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("deny", err)
	}
	g.core.Changed(a.ID)
	g.core.ObserveDecided(ctx, done, audit.DecisionDenied, "denied by "+v.User, now)
	if a.Tool != plug.GrantTool {
		if err := g.core.Decided(ctx, done, false); err != nil {
			return core.View(done, now), err
		}
	}
	return core.View(done, now), nil
}

// verify checks an answer through the approver and that its approver may
// decide the ticket.
func (g *Gate) verify(ctx context.Context, req plug.Request, a store.Approval, answer []byte) (plug.Verified, error) {
	v, err := g.core.Approver().Verify(ctx, req, answer)
	if err != nil {
		var ra *plug.RefusedAnswer
		if errors.As(err, &ra) {
			switch { // the cause told apart for the approver (progress.go)
			case errors.Is(err, stepup.ErrRevoked):
				err = fmt.Errorf("%w: %w", plug.ErrPasskeyRevoked, err)
			case errors.Is(err, stepup.ErrNotPermitted):
				err = fmt.Errorf("%w: %w", plug.ErrNotYours, err)
			}
			return plug.Verified{}, g.refusedAnswer(ctx, a, req.Action, answer, ra.User, ra.Check, err)
		}
		if m := core.Misbehaviour(err); m != "" {
			// Nothing it answered is used. One row per ticket, action and
			// misbehaviour, whatever the answer: anyone may post answers.
			return plug.Verified{}, g.refusedAnswer(ctx, a, req.Action, []byte("\x00misbehaved\x00"+m), "", m, err)
		}
		return plug.Verified{}, err
	}
	if err := core.MayDecide(v.User, a); err != nil {
		return plug.Verified{}, g.refusedAnswer(ctx, a, req.Action, answer, v.User, "may not decide this ticket",
			fmt.Errorf("%w: %w", plug.ErrOwnRequest, err))
	}
	if !slices.Contains(req.Approvers, v.User) {
		return plug.Verified{}, g.refusedAnswer(ctx, a, req.Action, answer, v.User, "not an approver of this ticket",
			plug.ErrNotYours)
	}
	return v, nil
}

// refusedAnswer records in the audit chain that an answer user's own
// authenticator made about ticket a was refused (check says why), and
// returns refusal. The ticket does not change. A copy of an answer this
// gate already recorded leaves no second row.
func (g *Gate) refusedAnswer(ctx context.Context, a store.Approval, action plug.Action, answer []byte, user, check string, refusal error) error {
	if !g.core.FirstRefusal(a.ID, string(action), answer) {
		return refusal
	}
	at, err := g.core.Now(context.WithoutCancel(ctx)) // recorded even when the caller gave up meanwhile
	if err != nil {
		return refusal
	}
	r := g.core.Record(a, audit.DecisionRefused, fmt.Sprintf("%s answer refused: %s", action, check), at)
	r.Approver = user
	if _, err := g.core.St().AppendAudit(context.WithoutCancel(ctx), r); err != nil {
		return errors.Join(refusal, fmt.Errorf("%w: the refusal could not be recorded", stepup.ErrStore))
	}
	return refusal
}

// Receipt implements [gate.Desk.Receipt].
func (d *Desk) Receipt(ctx context.Context, id stepup.TicketID) (*receipt.Receipt, error) {
	a, r, votes, now, err := d.receipter(ctx, id)
	if err != nil {
		return nil, err
	}
	if n := len(votes); n > 0 {
		return d.voteReceipt(ctx, a, r, votes[n-1], now)
	}
	evidence, err := d.g.core.OpenAnswer(a, now)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return r.Receipt(ctx, core.AnswerOf(a, evidence))
}

// QuorumReceipt implements [gate.Desk.QuorumReceipt].
func (d *Desk) QuorumReceipt(ctx context.Context, id stepup.TicketID) (*receipt.Quorum, error) {
	a, r, votes, now, err := d.receipter(ctx, id)
	if err != nil {
		return nil, err
	}
	route, err := d.g.core.Route(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	// Needed is what the policy asks, never what the ticket happens to
	// hold: a verifier holds the receipts to it.
	q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: core.QuorumOf(route)}
	if len(a.Votes) == 0 {
		evidence, err := d.g.core.OpenAnswer(a, now)
		if err != nil {
			return nil, fmt.Errorf("receipt: %w", err)
		}
		one, err := r.Receipt(ctx, core.AnswerOf(a, evidence))
		if err != nil {
			return nil, err
		}
		q.Receipts = []*receipt.Receipt{one}
		return q, nil
	}
	for _, v := range votes {
		one, err := d.voteReceipt(ctx, a, r, v, now)
		if err != nil {
			return nil, err
		}
		q.Receipts = append(q.Receipts, one)
	}
	return q, nil
}

// voteReceipt is the receipt of vote v of ticket a, judged at now.
func (d *Desk) voteReceipt(ctx context.Context, a store.Approval, r core.Receipter, v store.Vote, now time.Time) (*receipt.Receipt, error) {
	evidence, err := d.g.core.OpenAnswerOf(a, v.Approver, v.Evidence, now)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	one, err := r.Receipt(ctx, core.AnswerFor(a, v.Approver, evidence, v.At))
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return one, nil
}

// receipter loads ticket id, approved by people, as it stands now (a
// quorum whose votes fell short is pending again, and makes no receipt),
// the votes of it that still count, in the order given, the store's time
// and the approver that makes its receipts.
func (d *Desk) receipter(ctx context.Context, id stepup.TicketID) (store.Approval, core.Receipter, []store.Vote, time.Time, error) {
	a, _, err := d.g.core.Load(ctx, "receipt", id)
	if err != nil {
		return a, nil, nil, time.Time{}, err
	}
	now, err := d.g.core.Now(ctx) // the gate's MAC key is judged at the store's time
	if err != nil {
		return a, nil, nil, now, fmt.Errorf("receipt: %w", err)
	}
	if a, err = d.g.run.Lapse(ctx, a, now); err != nil {
		return a, nil, nil, now, err
	}
	switch a.State {
	case store.Approved, store.Executing, store.Done, store.Failed:
	default:
		return a, nil, nil, now, fmt.Errorf("receipt: %w: ticket is %s", plug.ErrNoReceipt, a.State)
	}
	if core.ReservedApprover(a.Approver) || (len(a.Evidence) == 0 && len(a.Votes) == 0) {
		return a, nil, nil, now, fmt.Errorf("receipt: %w: no person approved this ticket", plug.ErrNoReceipt)
	}
	r, ok := d.g.core.Approver().(core.Receipter)
	if !ok {
		return a, nil, nil, now, fmt.Errorf("receipt: %w: the approver makes no receipts", plug.ErrNoReceipt)
	}
	var votes []store.Vote
	if len(a.Votes) > 0 {
		route, err := d.g.core.Route(ctx, a)
		if err != nil {
			return a, nil, nil, now, fmt.Errorf("receipt: %w", err)
		}
		signed, _, err := d.g.standing(ctx, a, route, now)
		if err != nil {
			return a, nil, nil, now, fmt.Errorf("receipt: %w", err)
		}
		for _, v := range a.Votes {
			if slices.ContainsFunc(signed, func(s plug.Signature) bool { return s.Approver == v.Approver && s.At.Equal(v.At) }) {
				votes = append(votes, v)
			}
		}
		if len(votes) == 0 {
			return a, nil, nil, now, fmt.Errorf("receipt: %w: no approval of this ticket counts now", plug.ErrNoReceipt)
		}
	}
	return a, r, votes, now, nil
}
