package run

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Propose implements [gate.Gate.Propose].
func (g *Gate) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	return g.ProposeWithID(ctx, c, "")
}

// ProposeWithID is Propose with a fixed ticket id (empty for a fresh one).
func (g *Gate) ProposeWithID(ctx context.Context, c stepup.Call, id string) (stepup.Ticket, error) {
	if err := ctx.Err(); err != nil {
		return stepup.Ticket{}, err
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	c, oversized := bounded(c)
	p := &proposal{c: c, a: store.Approval{
		ID: id, Tool: c.Tool, CreatedAt: now, Requester: c.Principal, User: c.Principal.User,
		Session: c.Session, Task: c.Task, Step: c.Step, Taint: c.Taint, Rationale: c.Rationale,
	}}
	if why := screen(c, oversized); why != "" {
		if why == reasonUTF8 || why == reasonNUL {
			// The audit row must not carry bytes it cannot hash faithfully.
			p.a = store.Approval{ID: id, CreatedAt: now}
		}
		if oversized {
			return g.tooLarge(ctx, p, why)
		}
		return g.deny(ctx, p, why)
	}
	// The arguments are parsed once, here; the policy and the seal take
	// the parsed Value and never read the text again.
	parsed, err := canon.Parse(c.Args)
	if errors.Is(err, canon.ErrTooLarge) {
		return g.tooLarge(ctx, p, fmt.Sprintf("the arguments are over %d bytes", canon.MaxArgs))
	}
	if err != nil || parsed.Kind() != canon.KindObject {
		return g.deny(ctx, p, "arguments must be a JSON object that can be hashed faithfully")
	}
	if why := foldedNames(parsed); why != "" { // foldnames.go
		return g.deny(ctx, p, why)
	}
	d, err := g.core.Decide(ctx, plug.Proposal{Tool: c.Tool, Parsed: parsed, Task: c.Task, Step: c.Step,
		Session: c.Session, Principal: c.Principal, Taint: c.Taint})
	p.d = d
	switch {
	case err != nil:
		p.d = plug.Decision{}
		return g.deny(ctx, p, core.Why("policy could not decide", err))
	case d.PolicyVersion == "":
		return g.deny(ctx, p, "policy gave no version")
	case d.Verdict == plug.Deny:
		return g.deny(ctx, p, d.Reason)
	case d.Verdict != plug.Allow && d.Verdict != plug.NeedsApproval:
		return g.deny(ctx, p, "policy gave no verdict")
	}
	refs, err := canon.ResolveAll(ctx, g.core.Resolver(), d.Refs)
	if err != nil {
		return g.deny(ctx, p, "a referenced item could not be resolved")
	}
	p.sealed, err = g.SealEffect(canon.Effect{Tool: c.Tool, Refs: refs, Task: c.Task, Step: c.Step,
		Principal: c.Principal, PolicyVersion: d.PolicyVersion, Audience: d.Audience}, parsed)
	if errors.Is(err, canon.ErrTooLarge) {
		return g.tooLarge(ctx, p, fmt.Sprintf("the sealed call is over %d bytes", canon.MaxEffect))
	}
	if err != nil {
		return g.deny(ctx, p, "effect cannot be hashed faithfully")
	}
	// The store keeps the sealed bytes themselves: a parked Effect is
	// immutable (store.Approval), nothing but the store is handed them,
	// and Execute parses a copy of what the store returns and checks it
	// against the digest before anything runs.
	p.a.Effect, p.a.Digest = p.sealed.BytesUnsafe(), p.sealed.Digest()
	p.a.PolicyVersion, p.a.EffectClass, p.a.Approvers = d.PolicyVersion, d.Class, d.Approvers
	p.a.EscalatesTo, p.a.EscalatesAt = g.core.Escalation(p.a.CreatedAt, d.Timeout)

	if d.Verdict == plug.Allow {
		return g.allow(ctx, p)
	}
	note := ""
	switch {
	case c.Grant != "" && d.Quorum > 1:
		// One person's grant never stands in for several people.
		note = "a grant does not cover a call that needs several approvers"
	case c.Grant != "":
		t, used, why, err := g.byGrant(ctx, p)
		if used || err != nil {
			return t, err
		}
		note = why
	}
	route := plug.Route{Approvers: d.Approvers, Timeout: d.Timeout, Quorum: d.Quorum}
	approvers, err := g.core.Deciders(p.a, route, now)
	if err != nil {
		return g.deny(ctx, p, "nobody may approve the call")
	}
	p.quorum = core.QuorumOf(route)
	if len(approvers) < p.quorum {
		return g.deny(ctx, p, fmt.Sprintf("the call needs %d approvers and only %d may approve it", p.quorum, len(approvers)))
	}
	if why := g.render(p); why != "" {
		return g.deny(ctx, p, why)
	}
	target := core.FloodTarget(p.card.Summary().Recipients)
	if why, retry := g.core.Admit(ctx, core.FloodRequest(p.a, approvers, target)); why != "" {
		t, err := g.deny(ctx, p, why)
		t.RetryAfter = retry
		return t, err
	}
	return g.park(ctx, p, approvers, note)
}

// reasonUTF8 is the refusal of a call whose text is not UTF-8, and
// reasonNUL of one whose text holds a NUL character, which no text column
// of store/postgres can keep: their rows name only the refusal.
const (
	reasonUTF8 = "call text is not valid UTF-8"
	reasonNUL  = "call text holds a NUL character"
)

// screen returns why c is refused before the policy sees it, or "".
func screen(c stepup.Call, oversized bool) string {
	switch {
	case !textValid(c):
		return reasonUTF8
	case holdsNUL(c):
		return reasonNUL
	case oversized:
		return "a field of the call is over its size bound; it is recorded by hash and size"
	case c.Principal.Agent == "":
		return "call names no agent"
	case c.Principal.Check() != nil, canon.Reserved(c.Principal.User), canon.Reserved(c.Principal.Agent):
		return "call names a principal that is not a user and an agent with well-formed ids"
	case c.Session == "":
		return "call names no session"
	case strings.HasPrefix(c.Session, audit.PracticeSession):
		return "call names a session reserved for practice requests"
	case plug.ReservedTool(c.Tool):
		return "unknown tool"
	}
	return ""
}

// deny records a refusal: no ticket is stored, and the audit row is the
// record of it.
func (g *Gate) deny(ctx context.Context, p *proposal, reason string) (stepup.Ticket, error) {
	a := p.a
	a.PolicyVersion, a.EffectClass = p.d.PolicyVersion, p.d.Class
	if a.ID == "" {
		a.ID = store.NewID()
	}
	if _, err := g.core.St().AppendAudit(context.WithoutCancel(ctx), g.core.Record(a, audit.DecisionDeny, reason, a.CreatedAt)); err != nil {
		return stepup.Ticket{}, fmt.Errorf("propose: %w: the refusal could not be recorded: %v", stepup.ErrStore, err)
	}
	g.core.ObserveDecided(ctx, a, audit.DecisionDeny, reason, a.CreatedAt)
	return stepup.Ticket{ID: stepup.TicketID(a.ID), Status: stepup.StatusDenied, Tool: a.Tool,
		Digest: a.Digest, Reason: reason}, nil
}

// allow stores an allowed call approved by the policy, in one step, with
// the gate's MAC as its evidence.
func (g *Gate) allow(ctx context.Context, p *proposal) (stepup.Ticket, error) {
	a := p.a
	if a.ID == "" {
		a.ID = store.NewID()
	}
	a.State, a.ExpiresAt = store.Approved, a.CreatedAt.Add(g.core.TTL())
	a.Approver, a.Reason, a.ResolvedAt = core.PolicyApprover+p.d.PolicyVersion, p.d.Reason, a.CreatedAt
	a.Evidence = g.core.Seal(a, a.Approver)
	stored, _, err := g.core.St().Park(ctx, a, store.Caps{}, g.core.Note(audit.DecisionAllow, p.d.Reason, a.CreatedAt))
	switch {
	case errors.Is(err, store.ErrDuplicate) && p.a.ID != "":
		return g.core.Existing(ctx, p.a.ID) // another gate stored it first
	case err != nil:
		return g.refuseStore(ctx, p, err)
	}
	g.core.Changed(stored.ID)
	g.core.ObserveDecided(ctx, stored, audit.DecisionAllow, p.d.Reason, a.CreatedAt)
	return core.View(stored, a.CreatedAt), nil
}

// park stores a call that needs approval, with its card and nonce. note,
// when set, joins the audit row's reason (why a named grant was not used).
func (g *Gate) park(ctx context.Context, p *proposal, approvers []string, note string) (stepup.Ticket, error) {
	if p.card == nil {
		if why := g.render(p); why != "" {
			return g.deny(ctx, p, why)
		}
	}
	a, cd := p.a, p.card
	if _, err := rand.Read(a.Nonce[:]); err != nil {
		return g.deny(ctx, p, "no randomness for the nonce")
	}
	a.ExpiresAt = a.CreatedAt.Add(g.core.Window(p.d.Timeout))
	reason := p.d.Reason
	if note != "" {
		reason += "; " + note
	}
	merge := func(r string) store.Note {
		return func(t store.Approval, merged bool) audit.Record {
			if merged {
				r = "merged with an identical pending request"
			}
			return g.core.Record(t, audit.DecisionNeedsApproval, r, a.CreatedAt)
		}
	}
	parked, merged, err := g.core.St().Park(ctx, a, g.core.Caps(), merge(reason))
	switch {
	case errors.Is(err, store.ErrPendingCap):
		g.core.ObserveFlood(ctx, err)
		return g.deny(ctx, p, "too many requests are waiting for approval; try again later")
	case errors.Is(err, store.ErrDuplicate) && p.a.ID != "":
		return g.core.Existing(ctx, p.a.ID) // another gate parked it first
	case err != nil:
		return g.refuseStore(ctx, p, err)
	}
	g.core.Changed(parked.ID)
	g.core.ObserveParked(ctx, parked, merged, reason)
	if !merged && p.quorum <= 1 && g.Judges(parked) { // a model never counts towards a quorum
		return g.Judge(ctx, parked, cd)
	}
	if !merged {
		g.core.NotifyParked(ctx, parked, approvers)
		g.practise(ctx, p, approvers) // practice.go
	}
	t := core.View(parked, a.CreatedAt)
	t.Reason = p.d.Reason // why a person is asked; a pending ticket stores no reason
	return t, nil
}

// render renders p's card into p.card, p.a.Card and p.a.CardHash, or
// returns why it could not.
func (g *Gate) render(p *proposal) string {
	cd, err := g.core.Render(p.sealed, p.d, p.a.Taint, p.a.Rationale)
	if err != nil {
		return core.Why("the approval card could not be rendered faithfully", err)
	}
	if p.a.Card, err = cd.JSON(); err != nil {
		return "the approval card could not be rendered faithfully"
	}
	p.card, p.a.CardHash = cd, cd.Hash()
	return ""
}

// refuseStore answers a call the store could not keep. The refusal's row
// names a fresh id: if the store did keep the ticket after all (the
// answer was lost, not the write), that ticket and its own row stand
// apart and expire unused, since the runtime never learns its id.
//
// It is never a silent denial: a call over a store's bound (which the
// size table keeps from happening, canon.MaxEffect and canon.MaxCard) is
// [stepup.ErrTooLarge]; any other failure is [stepup.ErrStore], its cause
// in the log, and the runtime may propose again.
func (g *Gate) refuseStore(ctx context.Context, p *proposal, cause error) (stepup.Ticket, error) {
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return stepup.Ticket{}, fmt.Errorf("propose: %w", cause)
	}
	p.a.ID = ""
	if errors.Is(cause, store.ErrTooLarge) {
		return g.tooLarge(ctx, p, "the call is over a bound of the store")
	}
	g.core.ObserveStoreFailure(ctx, "propose", cause)
	if _, err := g.deny(ctx, p, "gate could not store the call"); err != nil {
		return stepup.Ticket{}, err
	}
	return stepup.Ticket{}, fmt.Errorf("propose: %w: the call could not be stored", stepup.ErrStore)
}

// tooLarge records the refusal of a call over a size limit, like every
// refusal, and answers it with its denied ticket (whose id names its audit
// row) and [stepup.ErrTooLarge], which a runtime tells apart from a
// policy's denial: nothing was stored, nothing ran.
func (g *Gate) tooLarge(ctx context.Context, p *proposal, why string) (stepup.Ticket, error) {
	p.a.Effect = nil // the refusal's row names the effect by its digest alone
	t, err := g.deny(ctx, p, why)
	if err != nil {
		return stepup.Ticket{}, err
	}
	return t, fmt.Errorf("propose: %w: %s", stepup.ErrTooLarge, why)
}

// bounded returns c with every field over the store's bounds replaced by
// a digest of it and its size, and whether any was: a refusal is then
// recorded, like every refusal, with an audit row that fits the chain.
// Args are bounded by canon.
func bounded(c stepup.Call) (stepup.Call, bool) {
	over := false
	key := func(s *string) {
		if len(*s) > store.MaxKeySize {
			*s, over = oversize(*s), true
		}
	}
	for _, f := range []*string{&c.Tool, &c.Task, &c.Step, &c.Session, &c.Grant, &c.Principal.User, &c.Principal.Agent} {
		key(f)
	}
	if len(c.Rationale) > store.MaxFieldSize {
		c.Rationale, over = oversize(c.Rationale), true
	}
	for _, list := range []*[]string{&c.Taint, &c.Principal.Delegations} {
		if len(*list) > store.MaxTaint {
			*list, over = []string{oversize(strings.Join(*list, "\x00"))}, true
			continue
		}
		*list = slices.Clone(*list)
		for i := range *list {
			key(&(*list)[i])
		}
	}
	return c, over
}

// oversize stands in for a field over its bound: its SHA-256 and size.
func oversize(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("(over the size bound: %d bytes, SHA-256 %x)", len(s), sum)
}

// textValid reports whether every text field of c is UTF-8: the store and
// the audit chain refuse anything else, and the card could not show it.
func textValid(c stepup.Call) bool {
	for _, f := range textFields(c) {
		if !utf8.ValidString(f) {
			return false
		}
	}
	return true
}

// textFields lists every text field of c.
func textFields(c stepup.Call) []string {
	fields := []string{c.Tool, c.Task, c.Step, c.Session, c.Rationale, c.Grant,
		c.Principal.User, c.Principal.Agent}
	return append(append(fields, c.Taint...), c.Principal.Delegations...)
}

// holdsNUL reports whether a text field of c holds a NUL character.
func holdsNUL(c stepup.Call) bool {
	for _, f := range textFields(c) {
		if strings.IndexByte(f, 0) >= 0 {
			return true
		}
	}
	return false
}
