package gate

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// GrantSpec is a delegated approval an approver asks to issue: what it
// covers, how often and until when.
type GrantSpec struct {
	// Grant is what it covers (package grant): an exact effect, a plan of
	// effects, or a template. A template must name the approver as its
	// User.
	Grant grant.Grant
	// Uses is how many calls an exact or template grant covers; zero for a
	// plan, whose steps are usable once each.
	Uses int
	// ExpiresAt ends the grant, used or not.
	ExpiresAt time.Time
}

// grantArgs is the argument object of a [GrantTool] ticket: what the
// approver signs.
type grantArgs struct {
	Grant     json.RawMessage `json:"grant"`
	Uses      int             `json:"uses"`
	ExpiresAt string          `json:"expires_at"` // RFC 3339, UTC, whole seconds: readable on the card
}

// Grant asks user to issue a delegated approval of their own agents'
// calls. It returns a pending ticket of tool [GrantTool] whose effect is
// the grant; user approves it like any other ticket, with [Desk.Prompt]
// and [Desk.Approve] and their passkey, so a grant exists only if
// the user's passkey signed exactly it, and its receipt is evidence like any
// approval's. When Approve verifies the assertion, it issues the grant, under
// the ticket's id, and returns the ticket executed; only user may approve it.
//
// Once issued, a call that names the grant ([Call].Grant) and that the
// policy says needs approval runs without asking, if the grant covers it
// (grant.Use: the user's own call, every argument covered, a use left,
// unexpired) and, when the tool routes to an approver group, the user is in
// that group. A grant never turns a denial into an allowance.
func (d *Desk) Grant(ctx context.Context, user string, spec GrantSpec) (stepup.Ticket, error) {
	g := d.g
	if err := checkPerson(user); err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w", err)
	}
	now, err := g.now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	raw, err := spec.Grant.Marshal()
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: %v", stepup.ErrConfig, err)
	}
	switch {
	case spec.Grant.Template != nil && spec.Grant.Template.User != user:
		return stepup.Ticket{}, fmt.Errorf("grant: %w: a template must name the approver as its user", stepup.ErrConfig)
	case spec.Grant.Kind == grant.KindPlan && spec.Uses != 0:
		return stepup.Ticket{}, fmt.Errorf("grant: %w: a plan's steps have one use each; uses must be zero", stepup.ErrConfig)
	case spec.Grant.Kind != grant.KindPlan && spec.Uses < 1:
		return stepup.Ticket{}, fmt.Errorf("grant: %w: uses must be at least one", stepup.ErrConfig)
	case !spec.ExpiresAt.Truncate(time.Second).After(now):
		return stepup.Ticket{}, fmt.Errorf("grant: %w: expiry must be in the future", stepup.ErrConfig)
	}
	args, err := json.Marshal(grantArgs{Grant: raw, Uses: spec.Uses,
		ExpiresAt: spec.ExpiresAt.UTC().Truncate(time.Second).Format(time.RFC3339)})
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: %v", stepup.ErrConfig, err)
	}
	dec := grantDecision()
	sealed, err := canon.Seal(canon.Effect{Tool: GrantTool, Args: args, Task: "grant", Principal: canon.Principal{User: user},
		PolicyVersion: dec.PolicyVersion, Audience: dec.Audience})
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: %v", stepup.ErrConfig, err)
	}
	cd, err := g.render(sealed, dec, nil, "")
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: the card could not be rendered", stepup.ErrConfig)
	}
	a := store.Approval{Tool: GrantTool, EffectClass: dec.Class, Effect: sealed.Bytes(), Digest: sealed.Digest(),
		CardHash: cd.Hash(), CreatedAt: now, ExpiresAt: now.Add(g.ttl), Requester: canon.Principal{User: user},
		User: user, Session: "grant:" + user, Task: "grant", PolicyVersion: dec.PolicyVersion}
	if a.Card, err = cd.JSON(); err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: the card could not be rendered", stepup.ErrConfig)
	}
	if _, err := rand.Read(a.Nonce[:]); err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w", err)
	}
	parked, _, err := g.st.Park(ctx, a, store.Caps{}, g.note(receipt.DecisionNeedsApproval, dec.Reason, now))
	if err != nil {
		return stepup.Ticket{}, ticketErr("grant", err)
	}
	g.changed()
	g.observeDecided(ctx, parked, receipt.DecisionNeedsApproval, dec.Reason, now)
	return view(parked, now), nil
}

// grantExecutor stores the grant of a consumed [GrantTool] ticket.
type grantExecutor struct{ g *Gate }

// Execute implements [Executor]. The key names the ticket, whose id the
// grant takes; a key without the prefix was not made by the desk and is
// refused, so only an approval through the desk issues a grant.
func (x grantExecutor) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	id, ok := strings.CutPrefix(key, grantKeyPrefix)
	if !ok || e.Tool != GrantTool {
		return nil, errors.New("grants are issued by the approval desk only")
	}
	out, _ := json.Marshal(map[string]string{"grant": id})
	if _, err := x.g.st.GetGrant(ctx, id); err == nil {
		return out, nil // stored before a crash: recovery finds it done
	}
	var args grantArgs
	dec := json.NewDecoder(strings.NewReader(string(e.Args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return nil, errors.New("grant ticket arguments do not parse")
	}
	spec, err := grant.Parse(args.Grant)
	if err != nil {
		return nil, err
	}
	exp, err := time.Parse(time.RFC3339, args.ExpiresAt)
	if err != nil {
		return nil, errors.New("grant ticket expiry does not parse")
	}
	now, err := x.g.now(ctx)
	if err != nil {
		return nil, err
	}
	_, err = grant.Put(ctx, x.g.st, spec, grant.Record{ID: id, User: e.Principal.User, Uses: args.Uses,
		CreatedAt: now, ExpiresAt: exp})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// byGrant approves a call that needs approval with the grant it names,
// when that grant covers it: the use is taken in the transaction that
// stores the call approved, so a use is never spent for a call the store
// did not keep. It reports whether it did; when it did not, note says why
// for the audit row, and the call goes on to a person.
func (g *Gate) byGrant(ctx context.Context, p *proposal) (t stepup.Ticket, used bool, note string, err error) {
	c, d := p.c, p.d
	if d.Approvers != "" && !slices.Contains(g.groups[d.Approvers], c.Principal.User) {
		return stepup.Ticket{}, false, "grant not used: the tool's approvers are a group its user is not in", nil
	}
	target, err := g.grants.Target(ctx, c.Grant, p.sealed)
	if err != nil {
		return stepup.Ticket{}, false, "grant not used: " + grantRefusal(err), nil
	}
	// The policy and the references may have taken a while since the call
	// came in: the grant is judged, expiry included, at the time of use.
	now, err := g.now(ctx)
	if err != nil {
		return stepup.Ticket{}, false, "", err
	}
	a := p.a
	if a.ID == "" {
		a.ID = store.NewID()
	}
	a.CreatedAt = now
	a.State, a.ExpiresAt = store.Approved, now.Add(g.ttl)
	a.Approver, a.Reason, a.ResolvedAt = grantApprover+c.Grant, "covered by grant "+c.Grant, now
	a.Evidence = g.seal(a, a.Approver)
	done, _, err := g.st.ParkGranted(ctx, a, target, g.note(receipt.DecisionAllow, a.Reason, now))
	switch {
	case errors.Is(err, store.ErrExpired), errors.Is(err, store.ErrGrantUsedUp), errors.Is(err, store.ErrRevoked),
		errors.Is(err, store.ErrNotFound):
		return stepup.Ticket{}, false, "grant not used: " + grantRefusal(grantErr(err)), nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return stepup.Ticket{}, true, "", fmt.Errorf("propose: %w", err)
	case err != nil:
		return stepup.Ticket{}, false, "grant not used: the gate could not store the call", nil
	}
	g.changed()
	g.observeDecided(ctx, done, receipt.DecisionAllow, a.Reason, now)
	return view(done, now), true, "", nil
}

// grantErr maps a store refusal of a grant's use to package grant's
// sentinels.
func grantErr(err error) error {
	switch {
	case errors.Is(err, store.ErrExpired):
		return grant.ErrExpired
	case errors.Is(err, store.ErrGrantUsedUp):
		return grant.ErrUsedUp
	case errors.Is(err, store.ErrRevoked):
		return grant.ErrRevoked
	case errors.Is(err, store.ErrNotFound):
		return grant.ErrNotFound
	}
	return err
}

// grantRefusal words why a grant did not cover a call, naming no values.
func grantRefusal(err error) string {
	var ce *grant.CoverageError
	switch {
	case errors.As(err, &ce):
		return strings.TrimPrefix(ce.Error(), "grant: ")
	case errors.Is(err, grant.ErrUsedUp):
		return "no uses left"
	case errors.Is(err, grant.ErrExpired):
		return "expired"
	case errors.Is(err, grant.ErrNotFound):
		return "no such grant"
	case errors.Is(err, grant.ErrRevoked):
		return "revoked"
	case errors.Is(err, grant.ErrInvalidGrant):
		return "stored grant is malformed"
	}
	return "grant store unavailable"
}

// executor returns the executor of tool: the gate's own for [GrantTool],
// otherwise the one registered with [WithExecutor].
func (g *Gate) executor(tool string) (Executor, bool) {
	if tool == GrantTool {
		return grantExecutor{g: g}, true
	}
	e, ok := g.executors[tool]
	return e, ok
}
