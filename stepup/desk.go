package stepup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// ApprovalDesk is the approver-facing side of a gate: show a pending
// ticket, approve it with a passkey assertion, or deny it. It is never
// handed to the agent runtime; serve it on a listener and origin the agent
// API does not share.
type ApprovalDesk struct{ g *Gate }

// Approvals returns the gate's approver-facing side.
func (g *Gate) Approvals() *ApprovalDesk { return &ApprovalDesk{g: g} }

// Prompt is what an approver is shown and asked to sign.
type Prompt struct {
	Ticket Ticket
	// Card is the approval card, rendered by code from the stored effect;
	// CardJSON is the stored card model whose hash the challenge commits to.
	Card     *card.Card
	CardJSON []byte
	// Options is the approver's request (for WebAuthn,
	// PublicKeyCredentialRequestOptions JSON) whose challenge is Challenge.
	Options   json.RawMessage
	Challenge [32]byte
	// Approvers lists who may approve now; nil means any enrolled approver.
	Approvers []string
}

// Prompt returns the card and the approver request for pending ticket id.
func (d *ApprovalDesk) Prompt(ctx context.Context, id TicketID) (Prompt, error) {
	a, req, err := d.pending(ctx, id)
	if err != nil {
		return Prompt{}, err
	}
	eff, err := d.g.recheckStored(a)
	if err != nil {
		return Prompt{}, err
	}
	dec, _, err := d.g.redecide(ctx, a)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	cd, err := d.g.render(eff, dec, a.Taint, a.Rationale)
	if err != nil || !cd.Hash().Equal(a.CardHash) {
		return Prompt{}, fmt.Errorf("prompt: %w: the card no longer renders as stored", ErrEffectChanged)
	}
	opts, err := d.g.approver.Options(ctx, req)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	return Prompt{Ticket: view(a, d.g.now()), Card: cd, CardJSON: a.Card, Options: opts,
		Challenge: req.Challenge, Approvers: req.Approvers}, nil
}

// pending loads a ticket an approver may still decide, with the request
// rebuilt from the STORED ticket and the approvers allowed now.
func (d *ApprovalDesk) pending(ctx context.Context, id TicketID) (store.Approval, Request, error) {
	g := d.g
	a, err := g.st.Get(ctx, string(id))
	if err != nil {
		return a, Request{}, storeErr("approval", err)
	}
	now := g.now()
	if a.State != store.Pending {
		return a, Request{}, fmt.Errorf("approval: %w", ErrResolved)
	}
	if !now.Before(a.ExpiresAt) {
		if err := g.timeout(ctx, a); err != nil {
			return a, Request{}, err
		}
		return a, Request{}, fmt.Errorf("approval: %w", ErrExpired)
	}
	route, err := g.route(ctx, a)
	if err != nil {
		return a, Request{}, fmt.Errorf("approval: %w", err)
	}
	approvers, err := g.approversAt(a, route)
	if err != nil {
		return a, Request{}, err
	}
	if a.Tool == GrantTool {
		approvers = []string{a.User} // a grant is its own user's to approve
	}
	return a, newRequest(a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, approvers), nil
}

// route returns who may approve a stored ticket and its timeout, from the
// policy's [Router] when it has one.
func (g *Gate) route(ctx context.Context, a store.Approval) (Route, error) {
	if a.Tool == GrantTool {
		return Route{}, nil // its own user approves it: see pending
	}
	if r, ok := g.policy.(Router); ok {
		if route, ok := r.Route(a.Tool, a.PolicyVersion); ok {
			return route, nil
		}
		return Route{}, fmt.Errorf("%w: policy changed since the ticket was parked", ErrNotApproved)
	}
	d, _, err := g.redecide(ctx, a)
	if err != nil {
		return Route{}, err
	}
	return Route{Approvers: d.Approvers, Timeout: d.Timeout}, nil
}

// approversAt lists who may approve a now: the decision's group during the
// first stage, and also the escalation group after it. Nil means any
// enrolled approver.
func (g *Gate) approversAt(a store.Approval, d Route) ([]string, error) {
	groups := []string{d.Approvers}
	if d.Timeout.Outcome == OutcomeEscalate && !g.now().Before(a.CreatedAt.Add(g.stage(d.Timeout))) {
		groups = append(groups, d.Timeout.EscalateTo)
	}
	if slices.Contains(groups, "") {
		return nil, nil
	}
	var users []string
	for _, name := range groups {
		members, ok := g.groups[name]
		if !ok {
			return nil, fmt.Errorf("approval: %w: unknown approver group %q", ErrConfig, name)
		}
		for u := range members {
			users = append(users, u)
		}
	}
	slices.Sort(users)
	return slices.Compact(users), nil
}

// Approve verifies answer (a WebAuthn assertion JSON, for the default
// approver) against the stored ticket and approves it. The challenge is
// recomputed from the stored digest, nonce, expiry and card hash, so an
// assertion for anything else fails. The approver must be enrolled, allowed
// for the ticket, not the requesting agent or any agent, and the ticket
// must still be pending and unexpired.
func (d *ApprovalDesk) Approve(ctx context.Context, id TicketID, answer []byte) (Ticket, error) {
	g := d.g
	a, req, err := d.pending(ctx, id)
	if err != nil {
		return Ticket{}, err
	}
	v, err := g.approver.Verify(ctx, req, answer)
	if err != nil {
		return Ticket{}, fmt.Errorf("approve: %w", err)
	}
	if err := mayDecide(v.User, a); err != nil {
		return Ticket{}, fmt.Errorf("approve: %w", err)
	}
	if req.Approvers != nil && !slices.Contains(req.Approvers, v.User) {
		return Ticket{}, fmt.Errorf("approve: %w: not an approver of this ticket", ErrNotPermitted)
	}
	if a.Tool == GrantTool && v.User != a.User {
		return Ticket{}, fmt.Errorf("approve: %w: a grant is approved by its own user", ErrNotPermitted)
	}
	now := g.now()
	done, err := g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: v.User,
		Reason: "approved by " + v.User, Evidence: v.Evidence, At: now})
	if err != nil {
		return Ticket{}, storeErr("approve", err)
	}
	g.changed()
	if err := g.audit(ctx, g.record(done, receipt.DecisionApproved, done.Reason, now)); err != nil {
		return Ticket{}, err
	}
	if a.Tool == GrantTool {
		// Approved is stored: the grant is issued even if the approver's
		// request ends now, or the ticket would stay approved and unissued.
		return g.issueGrant(context.WithoutCancel(ctx), done)
	}
	_ = g.decided(ctx, done, true)
	return view(done, now), nil
}

// Deny refuses pending ticket id. approver must be an enrolled approver
// allowed for the ticket; reason goes back to the model. A denial is not
// signed: it only withholds, so whoever reaches the desk may deny, and the
// desk must authenticate its callers as the approval pages do.
//
// With flood control on, the denial counts towards the lockout of the
// call's session and user. If it cannot be counted, Deny returns the denied
// ticket with an error wrapping [ErrStore].
func (d *ApprovalDesk) Deny(ctx context.Context, id TicketID, approver, reason string) (Ticket, error) {
	g := d.g
	a, req, err := d.pending(ctx, id)
	if err != nil {
		return Ticket{}, err
	}
	if err := mayDecide(approver, a); err != nil {
		return Ticket{}, fmt.Errorf("deny: %w", err)
	}
	if req.Approvers != nil && !slices.Contains(req.Approvers, approver) {
		return Ticket{}, fmt.Errorf("deny: %w: not an approver of this ticket", ErrNotPermitted)
	}
	creds, err := g.st.CredentialsByUser(ctx, approver)
	if err != nil {
		return Ticket{}, storeErr("deny", err)
	}
	if len(creds) == 0 {
		return Ticket{}, fmt.Errorf("deny: %w: not an enrolled approver", ErrNotPermitted)
	}
	now := g.now()
	why := "denied by " + approver
	if reason != "" {
		why += ": " + reason
	}
	done, err := g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Denied, Approver: approver, Reason: why, At: now})
	if err != nil {
		return Ticket{}, storeErr("deny", err)
	}
	g.changed()
	if err := g.audit(ctx, g.record(done, receipt.DecisionDenied, why, now)); err != nil {
		return Ticket{}, err
	}
	if a.Tool != GrantTool {
		if err := g.decided(ctx, done, false); err != nil {
			return view(done, now), err
		}
	}
	return view(done, now), nil
}

// mayDecide refuses an approver who is the requesting agent, any agent
// principal, or a delegate in the call's principal chain.
func mayDecide(user string, a store.Approval) error {
	switch {
	case user == "":
		return ErrNotPermitted
	case isAgent(user), user == a.Requester.Agent, slices.Contains(a.Requester.Delegations, user):
		return ErrNotPermitted
	}
	return nil
}

// recheckStored re-parses the stored effect and checks it still hashes to
// the stored digest (no reference resolution: nothing runs here).
func (g *Gate) recheckStored(a store.Approval) (canon.Effect, error) {
	if !canon.Sum(a.Effect).Equal(a.Digest) {
		return canon.Effect{}, fmt.Errorf("prompt: %w", ErrEffectChanged)
	}
	eff, err := canon.ParseEffect(a.Effect)
	if err != nil {
		return canon.Effect{}, fmt.Errorf("prompt: %w: stored effect does not parse", ErrEffectChanged)
	}
	return eff, nil
}
