package run

import (
	"context"
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
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// grantExecutor stores the grant of a consumed [GrantTool] ticket.
type grantExecutor struct{ g *Gate }

// Execute implements [Executor]. The key names the ticket, whose id the
// grant takes; a key without the prefix was not made by the desk and is
// refused, so only an approval through the desk issues a grant.
func (x grantExecutor) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	id, ok := strings.CutPrefix(key, core.GrantKeyPrefix)
	if !ok || e.Tool != plug.GrantTool {
		return nil, errors.New("grants are issued by the approval desk only")
	}
	out, _ := json.Marshal(map[string]string{"grant": id})
	if _, err := x.g.St.GetGrant(ctx, id); err == nil {
		return out, nil // stored before a crash: recovery finds it done
	}
	var args core.GrantArgs
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
	now, err := x.g.Now(ctx)
	if err != nil {
		return nil, err
	}
	_, err = grant.Put(ctx, x.g.St, spec, grant.Record{ID: id, User: e.Principal.User, Uses: args.Uses,
		CreatedAt: now, ExpiresAt: exp})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GrantStands reports whether grant id still carries the authority of the
// person who issued it: the grant is not revoked, and the approval that
// issued it still verifies, as a person's approval must before it runs
// (its passkey not revoked, its evidence intact). A grant's approvals,
// at Propose and again at Execute, are worth no more than that.
func (g *Gate) GrantStands(ctx context.Context, id string) error {
	gr, err := g.St.GetGrant(ctx, id)
	if err != nil {
		return core.TicketErr("grant", err)
	}
	if !gr.RevokedAt.IsZero() {
		return fmt.Errorf("grant: %w: the grant was revoked", stepup.ErrRevoked)
	}
	issued, _, err := g.Load(ctx, "grant", stepup.TicketID(id))
	if err != nil {
		return err
	}
	if issued.Tool != plug.GrantTool || issued.User != gr.User || core.ReservedApprover(issued.Approver) {
		return fmt.Errorf("grant: %w: the grant was not issued by its user's approval", stepup.ErrBadAssertion)
	}
	if err := g.EvidenceHolds(ctx, issued, issued.ResolvedAt); err != nil {
		return fmt.Errorf("grant: the approval that issued it: %w", err)
	}
	return nil
}

// byGrant approves a call that needs approval with the grant it names,
// when that grant covers it: the use is taken in the transaction that
// stores the call approved, so a use is never spent for a call the store
// did not keep. It reports whether it did; when it did not, note says why
// for the audit row, and the call goes on to a person.
func (g *Gate) byGrant(ctx context.Context, p *proposal) (t stepup.Ticket, used bool, note string, err error) {
	c, d := p.c, p.d
	if d.Approvers != "" && !slices.Contains(g.Groups[d.Approvers], c.Principal.User) {
		return stepup.Ticket{}, false, "grant not used: the tool's approvers are a group its user is not in", nil
	}
	target, err := g.Grants.Target(ctx, c.Grant, p.sealed)
	if err == nil {
		err = g.GrantStands(ctx, c.Grant)
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return stepup.Ticket{}, true, "", fmt.Errorf("propose: %w", err)
	case err != nil:
		return stepup.Ticket{}, false, "grant not used: " + GrantRefusal(err), nil
	}
	// The policy and the references may have taken a while since the call
	// came in: the grant is judged, expiry included, at the time of use.
	now, err := g.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, false, "", err
	}
	a := p.a
	if a.ID == "" {
		a.ID = store.NewID()
	}
	a.CreatedAt = now
	a.State, a.ExpiresAt = store.Approved, now.Add(g.TTL)
	a.Approver, a.Reason, a.ResolvedAt = core.GrantApprover+c.Grant, "covered by grant "+c.Grant, now
	a.Evidence = g.Seal(a, a.Approver)
	done, _, err := g.St.ParkGranted(ctx, a, target, g.Note(receipt.DecisionAllow, a.Reason, now))
	switch {
	case errors.Is(err, store.ErrExpired), errors.Is(err, store.ErrGrantUsedUp), errors.Is(err, store.ErrRevoked),
		errors.Is(err, store.ErrNotFound):
		return stepup.Ticket{}, false, "grant not used: " + GrantRefusal(err), nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return stepup.Ticket{}, true, "", fmt.Errorf("propose: %w", err)
	case err != nil:
		return stepup.Ticket{}, false, "grant not used: the gate could not store the call", nil
	}
	g.Changed()
	g.ObserveDecided(ctx, done, receipt.DecisionAllow, a.Reason, now)
	return core.View(done, now), true, "", nil
}

// GrantRefusal words why a grant did not cover a call, naming no values.
func GrantRefusal(err error) string {
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
	case errors.Is(err, stepup.ErrBadAssertion), errors.Is(err, stepup.ErrEffectChanged):
		return "the approval that issued it does not verify"
	}
	return "grant store unavailable"
}

// ExecutorOf returns the executor of tool: the gate's own for [GrantTool],
// otherwise the one registered with [WithExecutor].
func (g *Gate) ExecutorOf(tool string) (plug.Executor, bool) {
	if tool == plug.GrantTool {
		return grantExecutor{g: g}, true
	}
	e, ok := g.Executors[tool]
	return e, ok
}
