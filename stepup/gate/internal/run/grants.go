package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
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
	if _, err := x.g.core.St().GetGrant(ctx, id); err == nil {
		return out, nil // stored before a crash: recovery finds it done
	}
	spec, uses, exp, err := signedGrant(e)
	if err != nil {
		return nil, err
	}
	now, err := x.g.core.Now(ctx)
	if err != nil {
		return nil, err
	}
	_, err = grant.Put(ctx, x.g.core.St(), spec, grant.Record{ID: id, User: e.Principal.User, Uses: uses,
		CreatedAt: now, ExpiresAt: exp})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GrantStands reports whether grant id still carries the authority of the
// person who issued it, and returns the grant as that person signed it:
// the grant is not revoked, the approval that issued it still verifies, as
// a person's approval must before it runs (its passkey not revoked, its
// evidence intact), and the stored grant is the one that approval names
// (its spec, user and expiry, and no more uses than it granted). A grant's
// approvals, at Propose and again at Execute, are worth no more than that:
// a grant row written or widened in the database approves nothing.
func (g *Gate) GrantStands(ctx context.Context, id string) (grant.Grant, error) {
	gr, err := g.core.St().GetGrant(ctx, id)
	if err != nil {
		return grant.Grant{}, core.TicketErr("grant", err)
	}
	if !gr.RevokedAt.IsZero() {
		return grant.Grant{}, fmt.Errorf("grant: %w: the grant was revoked", stepup.ErrRevoked)
	}
	issued, s, err := g.core.Load(ctx, "grant", stepup.TicketID(id))
	if err != nil {
		return grant.Grant{}, err
	}
	if issued.Tool != plug.GrantTool || issued.User != gr.User || core.ReservedApprover(issued.Approver) {
		return grant.Grant{}, fmt.Errorf("grant: %w: the grant was not issued by its user's approval", stepup.ErrBadAssertion)
	}
	if err := g.EvidenceHolds(ctx, issued, issued.ResolvedAt); err != nil {
		return grant.Grant{}, fmt.Errorf("grant: the approval that issued it: %w", err)
	}
	signed, uses, expires, err := signedGrant(s.Effect())
	if err != nil {
		return grant.Grant{}, fmt.Errorf("grant: %w: the approval that issued it: %v", stepup.ErrBadAssertion, err)
	}
	stored, err := grant.Parse(gr.Spec)
	if err != nil {
		return grant.Grant{}, fmt.Errorf("grant: %w: the stored grant does not parse", stepup.ErrBadAssertion)
	}
	a, errA := signed.Marshal()
	b, errB := stored.Marshal()
	if errA != nil || errB != nil || !bytes.Equal(a, b) || !gr.ExpiresAt.Equal(expires) || gr.Remaining > uses {
		return grant.Grant{}, fmt.Errorf("grant: %w: the stored grant is not the one its user approved", stepup.ErrBadAssertion)
	}
	return signed, nil
}

// signedGrant reads the grant a grant ticket's effect e asks for: its
// spec, how many uses and until when.
func signedGrant(e canon.Effect) (grant.Grant, int, time.Time, error) {
	var args core.GrantArgs
	dec := json.NewDecoder(bytes.NewReader(e.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return grant.Grant{}, 0, time.Time{}, errors.New("grant ticket arguments do not parse")
	}
	spec, err := grant.Parse(args.Grant)
	if err != nil {
		return grant.Grant{}, 0, time.Time{}, err
	}
	exp, err := time.Parse(time.RFC3339, args.ExpiresAt)
	if err != nil {
		return grant.Grant{}, 0, time.Time{}, errors.New("grant ticket expiry does not parse")
	}
	return spec, args.Uses, exp, nil
}

// coveredBy fails with a *grant.CoverageError unless g covers s.
func coveredBy(g grant.Grant, s canon.Sealed) error {
	cov, err := grant.CoversSealed(g, s)
	switch {
	case err != nil:
		return err
	case !cov.Covered:
		return &grant.CoverageError{Coverage: cov}
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
	if d.Approvers != "" && !slices.Contains(g.core.Groups()[d.Approvers], c.Principal.User) {
		return stepup.Ticket{}, false, "grant not used: the tool's approvers are a group its user is not in", nil
	}
	// Its issuer approves the call alone: not while they are below the
	// catch floor for its class (WithSecondPersonBelowFloor).
	if err := g.core.SecondPersonNeeded(ctx, c.Principal.User, d.Class); err != nil {
		return stepup.Ticket{}, false, "grant not used: " + secondPersonNote(err), nil
	}
	target, err := g.core.Coverage().Target(ctx, c.Grant, p.sealed)
	if err == nil {
		// The grant is judged as its user signed it, not as the store
		// holds it now.
		var signed grant.Grant
		if signed, err = g.GrantStands(ctx, c.Grant); err == nil {
			err = coveredBy(signed, p.sealed)
		}
	}
	switch {
	case core.Misbehaviour(err) != "" && ctx.Err() == nil:
		// A grant check that panicked or hung covers nothing.
		return stepup.Ticket{}, false, "grant not used: the " + core.Misbehaviour(err), nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return stepup.Ticket{}, true, "", fmt.Errorf("propose: %w", err)
	case err != nil:
		return stepup.Ticket{}, false, "grant not used: " + GrantRefusal(err), nil
	}
	// The policy and the references may have taken a while since the call
	// came in: the grant is judged, expiry included, at the time of use.
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, false, "", err
	}
	a := p.a
	if a.ID == "" {
		a.ID = store.NewID()
	}
	a.CreatedAt = now
	a.State, a.ExpiresAt = store.Approved, now.Add(g.core.TTL())
	a.Approver, a.Reason, a.ResolvedAt = core.GrantApprover+c.Grant, "covered by grant "+c.Grant, now
	a.Evidence = g.core.Seal(a, a.Approver)
	done, _, err := g.core.St().ParkGranted(ctx, a, target, g.core.Note(audit.DecisionAllow, a.Reason, now))
	switch {
	case errors.Is(err, store.ErrExpired), errors.Is(err, store.ErrGrantUsedUp), errors.Is(err, store.ErrRevoked),
		errors.Is(err, store.ErrNotFound):
		return stepup.Ticket{}, false, "grant not used: " + GrantRefusal(err), nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return stepup.Ticket{}, true, "", fmt.Errorf("propose: %w", err)
	case err != nil:
		return stepup.Ticket{}, false, "grant not used: the gate could not store the call", nil
	}
	g.core.Changed(done.ID)
	g.core.ObserveDecided(ctx, done, audit.DecisionAllow, a.Reason, now)
	return core.View(done, now), true, "", nil
}

// secondPersonNote words why the second-person rule kept a grant from
// being used.
func secondPersonNote(err error) string {
	if errors.Is(err, plug.ErrSecondPersonNeeded) {
		return "its user's catch rate is below the floor, so another person must approve calls of this class"
	}
	return "whether its user needs a second person could not be read"
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
	e, ok := g.core.Executors()[tool]
	return e, ok
}
