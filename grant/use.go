package grant

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// Record is what [Put] stores beside a grant: whose it is, how often and
// until when it may be used.
type Record struct {
	// ID names the grant; empty means a new random one. It holds no "/"
	// (plan steps are stored under "<id>/<digest>").
	ID        string
	User      string // the user who granted it; it covers only their calls
	Uses      int    // uses of an exact or template grant; zero for a plan
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Keeper is what [Put] writes grants to: every store.Grants implements it.
type Keeper interface {
	PutGrant(ctx context.Context, g store.Grant) error
	GetGrant(ctx context.Context, id string) (store.Grant, error)
}

// Reader is what [Target] reads grants from.
type Reader interface {
	GetGrant(ctx context.Context, id string) (store.Grant, error)
}

// Put stores g as r and returns its id. An exact or template grant is one
// store record with r.Uses uses. A plan is one record per digest, each with
// one use (so no step of the plan runs twice), written first, then the
// plan's own record, which holds the spec and no uses: a plan whose steps
// were not all written has no record and covers nothing. Putting the same
// plan again under the same id completes one that was cut short (a retry
// after a crash).
//
// It fails with [ErrInvalidGrant] when g or r is malformed or a template
// names a user other than r.User, and with the store's error otherwise
// (store.ErrDuplicate for a taken id).
func Put(ctx context.Context, grants Keeper, g Grant, r Record) (string, error) {
	spec, err := g.Marshal()
	if err != nil {
		return "", fmt.Errorf("grant: put: %w", err)
	}
	if r.ID == "" {
		r.ID = store.NewID()
	}
	switch {
	case strings.Contains(r.ID, "/") || len(r.ID) > store.MaxKeySize-1-2*len(canon.Digest{}):
		return "", fmt.Errorf("grant: put: %w", invalid("id holds a \"/\" or is too long"))
	case r.User == "":
		return "", fmt.Errorf("grant: put: %w", invalid("no user"))
	case g.Template != nil && g.Template.User != r.User:
		return "", fmt.Errorf("grant: put: %w", invalid("template names another user"))
	case r.CreatedAt.IsZero() || !r.ExpiresAt.After(r.CreatedAt):
		return "", fmt.Errorf("grant: put: %w", invalid("expiry must follow creation"))
	case g.Kind == KindPlan && r.Uses != 0:
		return "", fmt.Errorf("grant: put: %w", invalid("a plan's steps have one use each; uses must be zero"))
	case g.Kind != KindPlan && r.Uses < 1:
		return "", fmt.Errorf("grant: put: %w", invalid("uses must be at least one"))
	}
	rec := store.Grant{ID: r.ID, User: r.User, Spec: spec, Remaining: r.Uses,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	if g.Kind == KindPlan {
		for _, d := range g.Digests {
			step, err := Exact(d).Marshal()
			if err != nil {
				return "", fmt.Errorf("grant: put: %w", err)
			}
			s := rec
			s.ID, s.Spec, s.Remaining = stepID(r.ID, d), step, 1
			if err := grants.PutGrant(ctx, s); err != nil && !(errors.Is(err, store.ErrDuplicate) && sameStep(ctx, grants, s)) {
				return "", fmt.Errorf("grant: put: plan step: %w", err)
			}
		}
	}
	if err := grants.PutGrant(ctx, rec); err != nil {
		return "", fmt.Errorf("grant: put: %w", err)
	}
	return r.ID, nil
}

// sameStep reports whether the stored record of step s is s, unused: a Put
// of the same plan, cut short before the plan's own record was written
// (only that record makes the steps usable), which a retry completes.
func sameStep(ctx context.Context, grants Keeper, s store.Grant) bool {
	got, err := grants.GetGrant(ctx, s.ID)
	return err == nil && got.User == s.User && bytes.Equal(got.Spec, s.Spec) && got.Remaining == s.Remaining &&
		got.ExpiresAt.Truncate(time.Microsecond).Equal(s.ExpiresAt.Truncate(time.Microsecond))
}

// stepID names the record of one step of plan id.
func stepID(id string, d canon.Digest) string { return id + "/" + d.String() }

// Use takes one use of the grant id for the effect e at now: it reads the
// grant, checks that it is the principal's user's, that it is neither
// revoked nor expired at now, and that it covers e ([Covers]), then takes
// the use in one atomic store operation (store.Grants.UseGrant), which
// checks the expiry and the uses left again. For a plan it takes the use of
// e's step; a step's own record is never named directly (an id with "/" is
// not found). A plan is revoked by revoking its own record, the id [Put]
// returned: Use reads that record again after the step's use is taken, so
// a revocation that commits while a call is being granted refuses it too.
// It returns the record whose use was taken, as after the use.
//
// Any failure refuses the use: [*CoverageError] ([ErrNotCovered]),
// [ErrRevoked], [ErrExpired], [ErrUsedUp], [ErrNotFound], [ErrInvalidGrant]
// for a stored spec that does not parse or a plan whose records disagree,
// [ErrUnavailable] for other store errors (also wrapping the store's error,
// so a cancelled context is visible).
func Use(ctx context.Context, grants store.Grants, id string, e canon.Effect, now time.Time) (store.Grant, error) {
	if now.IsZero() {
		return store.Grant{}, errors.New("grant: use: no time given")
	}
	s, err := canon.Seal(e)
	if err != nil {
		return store.Grant{}, fmt.Errorf("grant: use: effect: %w", err)
	}
	target, rec, err := targetOf(ctx, grants, id, s)
	if err != nil {
		return store.Grant{}, err
	}
	if err := inForce(rec, now); err != nil {
		return store.Grant{}, err
	}
	after, err := grants.UseGrant(ctx, target, now)
	if err != nil {
		return store.Grant{}, storeErr(err)
	}
	if target != id {
		// The step's record knows nothing of its plan's revocation.
		rec, err := grants.GetGrant(ctx, id)
		if err != nil {
			return store.Grant{}, storeErr(err)
		}
		if err := inForce(rec, now); err != nil {
			return store.Grant{}, err
		}
	}
	return after, nil
}

// Target reads grant id and checks that it is s's user's, that it is not
// revoked, and that it covers s exactly ([CoversSealed]), without taking a
// use. It returns the record a call of s uses: the grant itself, or for a
// plan the record of s's step, which Target also reads: a step that is
// revoked, another user's, or would outlive its plan is refused, so the
// plan's revocation and expiry hold for every step. A store that approves
// the call and takes that use in one transaction (store.Grants.ParkGranted)
// then judges the expiry and the uses left by its own clock, so that a use
// is never spent for a call the store did not keep.
//
// A revocation that commits after Target read the plan is not seen by the
// store's use of the step: a caller that takes the use itself re-reads the
// plan afterwards, as [Use] does.
//
// Refusals are as [Use]'s, but for expiry and uses left.
func Target(ctx context.Context, grants Reader, id string, s canon.Sealed) (string, error) {
	target, _, err := targetOf(ctx, grants, id, s)
	return target, err
}

// targetOf is [Target], also returning the grant's own record.
func targetOf(ctx context.Context, grants Reader, id string, s canon.Sealed) (string, store.Grant, error) {
	if strings.Contains(id, "/") {
		// A plan's step, named directly: steps are used through their
		// plan's record, so a plan that has none covers nothing.
		return "", store.Grant{}, fmt.Errorf("grant: use: %w", ErrNotFound)
	}
	rec, err := grants.GetGrant(ctx, id)
	if err != nil {
		return "", store.Grant{}, storeErr(err)
	}
	if !rec.RevokedAt.IsZero() {
		return "", store.Grant{}, fmt.Errorf("grant: use: %w", ErrRevoked)
	}
	g, err := Parse(rec.Spec)
	if err != nil {
		return "", store.Grant{}, fmt.Errorf("grant: use: stored spec: %w", err)
	}
	if rec.User != s.Principal().User {
		return "", store.Grant{}, &CoverageError{Coverage: notCovered(ReasonUser, "")}
	}
	cov, err := CoversSealed(g, s)
	if err != nil {
		return "", store.Grant{}, fmt.Errorf("grant: use: %w", err)
	}
	if !cov.Covered {
		return "", store.Grant{}, &CoverageError{Coverage: cov}
	}
	if g.Kind != KindPlan {
		return id, rec, nil
	}
	target := stepID(id, s.Digest())
	step, err := grants.GetGrant(ctx, target)
	if err != nil {
		return "", store.Grant{}, storeErr(err)
	}
	switch {
	case !step.RevokedAt.IsZero():
		return "", store.Grant{}, fmt.Errorf("grant: use: plan step: %w", ErrRevoked)
	case step.User != rec.User || step.ExpiresAt.After(rec.ExpiresAt):
		return "", store.Grant{}, fmt.Errorf("grant: use: %w", invalid("a plan step is another user's or outlives its plan"))
	}
	return target, rec, nil
}

// inForce reports, as an error, whether the grant record rec is revoked or
// expired at now.
func inForce(rec store.Grant, now time.Time) error {
	switch {
	case !rec.RevokedAt.IsZero():
		return fmt.Errorf("grant: use: %w", ErrRevoked)
	case !now.Before(rec.ExpiresAt):
		return fmt.Errorf("grant: use: %w", ErrExpired)
	}
	return nil
}

// storeErr maps a store error to this package's sentinels, keeping it
// wrapped.
func storeErr(err error) error {
	sentinel := ErrUnavailable
	switch {
	case errors.Is(err, store.ErrNotFound):
		sentinel = ErrNotFound
	case errors.Is(err, store.ErrExpired):
		sentinel = ErrExpired
	case errors.Is(err, store.ErrGrantUsedUp):
		sentinel = ErrUsedUp
	case errors.Is(err, store.ErrRevoked):
		sentinel = ErrRevoked
	}
	return fmt.Errorf("grant: use: %w: %w", sentinel, err)
}
