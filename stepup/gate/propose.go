package gate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Propose decides c. Allowed and denied calls are answered at once; a call
// that needs approval is parked with its canonical effect, digest, card,
// nonce and expiry, and comes back pending.
//
// Every call gets a ticket. An allowed call's ticket is stored as approved
// by the policy, so [Gate.Execute] is the one execute-once path for every
// call. A denied call's ticket is not stored; its Reason is meant to go back
// to the model as an observation. An error is returned only when the
// decision could not be recorded (context ended, audit log unwritable);
// the call must then be treated as denied.
func (g *Gate) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	return g.propose(ctx, c, "")
}

// propose is Propose with a fixed ticket id (empty for a fresh one).
func (g *Gate) propose(ctx context.Context, c stepup.Call, id string) (stepup.Ticket, error) {
	if err := ctx.Err(); err != nil {
		return stepup.Ticket{}, err
	}
	now := g.now()
	c, oversized := bounded(c)
	pending := store.Approval{
		ID: id, Tool: c.Tool, CreatedAt: now, Requester: c.Principal, User: c.Principal.User,
		Session: c.Session, Task: c.Task, Step: c.Step, Taint: c.Taint, Rationale: c.Rationale,
	}
	deny := func(d Decision, reason string) (stepup.Ticket, error) {
		pending.PolicyVersion, pending.EffectClass = d.PolicyVersion, d.Class
		r := g.record(pending, receipt.DecisionDeny, reason, now)
		if pending.ID == "" {
			pending.ID = store.NewID()
		}
		r.TicketID = pending.ID
		if err := g.audit(ctx, r); err != nil {
			return stepup.Ticket{}, err
		}
		return stepup.Ticket{ID: stepup.TicketID(pending.ID), Status: stepup.StatusDenied, Tool: c.Tool,
			Digest: pending.Digest, Reason: reason}, nil
	}

	if !textValid(c) {
		// The audit row must not carry bytes it cannot hash faithfully.
		pending.Session, pending.Task, pending.Step, pending.Tool = "", "", "", ""
		pending.Requester, pending.User, pending.Taint, pending.Rationale = canon.Principal{}, "", nil, ""
		c.Tool = ""
		return deny(Decision{}, "call text is not valid UTF-8")
	}
	if oversized {
		return deny(Decision{}, "a field of the call is over its size bound; it is recorded by hash and size")
	}
	if c.Principal.Agent == "" || !isAgent(c.Principal.Agent) {
		return deny(Decision{}, "call names no agent")
	}
	args, err := canon.Canonicalize(c.Args)
	if err != nil || len(args) == 0 || args[0] != '{' {
		return deny(Decision{}, "arguments must be a JSON object that can be hashed faithfully")
	}
	if c.Session == "" || c.Principal.User == "" {
		return deny(Decision{}, "call names no session or no user")
	}
	if ReservedTool(c.Tool) {
		return deny(Decision{}, "unknown tool")
	}
	d, err := g.policy.Decide(ctx, Proposal{Tool: c.Tool, Args: args, Task: c.Task, Step: c.Step,
		Session: c.Session, Principal: c.Principal, Taint: c.Taint})
	switch {
	case err != nil:
		return deny(Decision{}, "policy could not decide")
	case d.PolicyVersion == "":
		return deny(d, "policy gave no version")
	case d.Verdict == Deny:
		return deny(d, d.Reason)
	case d.Verdict != Allow && d.Verdict != NeedsApproval:
		return deny(d, "policy gave no verdict")
	}
	refs, err := canon.ResolveAll(ctx, g.resolver, d.Refs)
	if err != nil {
		return deny(d, "a referenced item could not be resolved")
	}
	eff := canon.Effect{Tool: c.Tool, Args: args, Refs: refs, Task: c.Task, Step: c.Step,
		Principal: c.Principal, PolicyVersion: d.PolicyVersion, Audience: d.Audience}
	canonical, err := eff.Canonical()
	if err != nil {
		return deny(d, "effect cannot be hashed faithfully")
	}
	pending.Effect, pending.Digest = canonical, canon.Sum(canonical)
	pending.PolicyVersion, pending.EffectClass, pending.Reason = d.PolicyVersion, d.Class, d.Reason

	if d.Verdict == Allow {
		return g.allow(ctx, pending, d, deny)
	}
	t, used, note, err := g.byGrant(ctx, pending, eff, d, c)
	if used || err != nil {
		return t, err
	}
	if why, retry := g.admit(ctx, c.Session, c.Principal.User); why != "" {
		t, err := deny(d, why)
		t.RetryAfter = retry
		return t, err
	}
	return g.park(ctx, pending, eff, d, c, deny, note)
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
	fields := []string{c.Tool, c.Task, c.Step, c.Session, c.Rationale, c.Grant,
		c.Principal.User, c.Principal.Agent}
	fields = append(append(fields, c.Taint...), c.Principal.Delegations...)
	for _, f := range fields {
		if !utf8.ValidString(f) {
			return false
		}
	}
	return true
}

// allow stores an allowed call as approved by the policy.
func (g *Gate) allow(ctx context.Context, a store.Approval, d Decision,
	deny func(Decision, string) (stepup.Ticket, error)) (stepup.Ticket, error) {
	a.ExpiresAt = a.CreatedAt.Add(g.ttl)
	parked, merged, err := g.st.Park(ctx, a, store.Caps{})
	if err != nil {
		return deny(d, "gate could not store the call")
	}
	if merged {
		// A pending ticket for the same effect exists: it stays pending.
		return view(parked, a.CreatedAt), g.audit(ctx, g.record(parked, receipt.DecisionNeedsApproval,
			"merged with a pending request for the same action", a.CreatedAt))
	}
	by := policyApprover + d.PolicyVersion
	approved, err := g.st.Resolve(ctx, parked.ID, store.Resolution{To: store.Approved,
		Approver: by, Reason: d.Reason, Evidence: g.seal(parked, by), At: a.CreatedAt})
	if err != nil {
		return deny(d, "gate could not store the call")
	}
	if err := g.audit(ctx, g.record(approved, receipt.DecisionAllow, d.Reason, a.CreatedAt)); err != nil {
		return stepup.Ticket{}, err
	}
	return view(approved, a.CreatedAt), nil
}

// park stores a call that needs approval, with its card and nonce. note,
// when set, joins the audit row's reason (why a named grant was not used).
func (g *Gate) park(ctx context.Context, a store.Approval, eff canon.Effect, d Decision, c stepup.Call,
	deny func(Decision, string) (stepup.Ticket, error), note string) (stepup.Ticket, error) {
	cd, err := g.render(eff, d, c.Taint, c.Rationale)
	if err != nil {
		return deny(d, "the approval card could not be rendered faithfully")
	}
	a.Card, _ = cd.JSON()
	a.CardHash = cd.Hash()
	if _, err := rand.Read(a.Nonce[:]); err != nil {
		return deny(d, "no randomness for the nonce")
	}
	a.ExpiresAt = a.CreatedAt.Add(g.window(d.Timeout))
	parked, merged, err := g.st.Park(ctx, a, g.caps)
	switch {
	case errors.Is(err, store.ErrPendingCap):
		return deny(d, "too many requests are waiting for approval; try again later")
	case errors.Is(err, store.ErrDuplicate) && a.ID != "":
		parked, err = g.st.Get(ctx, a.ID) // another gate parked it first
		if err != nil {
			return deny(d, "gate could not store the call")
		}
		return view(parked, a.CreatedAt), nil
	case err != nil:
		return deny(d, "gate could not store the call")
	}
	reason := d.Reason
	if merged {
		reason = "merged with a pending request for the same action"
	}
	if note != "" {
		reason += "; " + note
	}
	if err := g.audit(ctx, g.record(parked, receipt.DecisionNeedsApproval, reason, a.CreatedAt)); err != nil {
		return stepup.Ticket{}, err
	}
	g.changed()
	return view(parked, a.CreatedAt), nil
}

// render builds the approval card from the canonical effect and trusted
// context; the rationale is the only agent-written text on it.
func (g *Gate) render(eff canon.Effect, d Decision, taint []string, rationale string) (*card.Card, error) {
	reasons := []string{}
	if d.Reason != "" {
		reasons = append(reasons, d.Reason)
	}
	return card.Render(eff, card.Context{
		Title: d.Title, Class: d.Class, PolicyVersion: d.PolicyVersion,
		Reasons: reasons, Provenance: taint, Hints: d.Hints, Trusted: d.Trusted,
		Rationale: rationale, ToolDescription: d.Description,
	})
}

// stage returns how long the first approver group has.
func (g *Gate) stage(t Timeout) time.Duration {
	if t.After > 0 {
		return t.After
	}
	return g.ttl
}

// window returns how long a parked ticket lives: one stage, or two when it
// escalates to another group.
func (g *Gate) window(t Timeout) time.Duration {
	if t.Outcome == OutcomeEscalate {
		return 2 * g.stage(t)
	}
	return g.stage(t)
}

// redecide asks the policy again about a stored ticket, for its route and
// card context. A policy whose version changed since the ticket was parked
// fails: the ticket was decided under rules that no longer hold.
func (g *Gate) redecide(ctx context.Context, a store.Approval) (Decision, canon.Effect, error) {
	eff, err := canon.ParseEffect(a.Effect)
	if err != nil {
		return Decision{}, canon.Effect{}, fmt.Errorf("%w: stored effect does not parse", stepup.ErrEffectChanged)
	}
	d, err := g.decide(ctx, Proposal{Tool: eff.Tool, Args: eff.Args, Task: eff.Task, Step: eff.Step,
		Session: a.Session, Principal: eff.Principal, Taint: a.Taint})
	switch {
	case err != nil:
		return Decision{}, eff, fmt.Errorf("%w: policy could not decide", stepup.ErrNotApproved)
	case d.PolicyVersion != eff.PolicyVersion:
		return Decision{}, eff, fmt.Errorf("%w: decided under %q, the policy is now %q", stepup.ErrPolicyChanged,
			eff.PolicyVersion, d.PolicyVersion)
	case d.Verdict == Deny:
		return Decision{}, eff, fmt.Errorf("%w: the policy now denies the call", stepup.ErrPolicyChanged)
	}
	return d, eff, nil
}
