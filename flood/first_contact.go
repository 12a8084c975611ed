package flood

import (
	"context"
	"fmt"
	"time"
)

// Default limits on targets, taken by the zero fields of [Limits]. They
// apply only to requests that name a [Target].
var (
	// DefaultTargetRate admits 10 approval requests per hour to one target
	// on behalf of one user, whichever agents and sessions ask.
	DefaultTargetRate = Rate{N: 10, Per: time.Hour}
	// DefaultTargetLockout locks one user's requests to a known target
	// for a day after 3 denials in a row of requests to
	// it. Only an approval of a request to that target ends the run:
	// approvals of the user's other work do not, unlike the principal
	// lockouts, so benign work mixed into a flood does not reset it.
	DefaultTargetLockout = Lockout{After: 3, For: 24 * time.Hour}
	// DefaultFirstContactRate admits 5 approval requests per hour per user
	// to targets the operator's history has not seen: an attacker that
	// rotates over targets it controls meets this limit.
	DefaultFirstContactRate = Rate{N: 5, Per: time.Hour}
	// DefaultFirstContactTargetRate admits at most one approval request
	// in each aligned hour (one every two hours to a steady asker; see
	// [Rate]) to one target the operator's history has not seen, whichever
	// users ask: until a person has approved a request to it, a new target gets
	// one card at a time, so a burst to it is one card, not one per
	// request, however many users' agents send it.
	DefaultFirstContactTargetRate = Rate{N: 1, Per: time.Hour}
	// DefaultFirstContactLockout locks every request to a target the
	// operator's history has not seen for a day after one denial: an
	// approver who refused a first contact has said what they think of
	// it, and a flood to it gets one card, not one per burst.
	DefaultFirstContactLockout = Lockout{After: 1, For: 24 * time.Hour}
)

// The scopes of the limits on targets.
const (
	// ScopeTarget is one target on behalf of one user, over all of the
	// user's agents and sessions: [Limits.Target] and
	// [Limits.TargetLockout].
	ScopeTarget Scope = "target"
	// ScopeFirstContact is a target the operator's history has not seen,
	// whichever users ask ([Limits.FirstContactTarget],
	// [Limits.FirstContactLockout]), and one user's requests to such
	// targets ([Limits.FirstContact]).
	ScopeFirstContact Scope = "first-contact"
)

// Admission says how the gate should handle a request [Limiter.Admission]
// admitted.
type Admission struct {
	// FirstContact is set when the request names a [Target] that the
	// operator's history has not seen: no request to it, on behalf of any
	// user, has been approved, and nobody introduced it
	// ([Limiter.Introduce]). The gate should handle it more strictly than
	// a request to a known target, for example by asking a second
	// approver.
	FirstContact bool
}

// targeted is a request's target, looked up. The zero targeted is a
// request without a target.
type targeted struct {
	subject string // (user, target): the target rate and lockout; "" when the request has none
	target  string // (target): the operator's history and the first-contact limits of the target
	user    string // (user): the user's first-contact rate
	seen    bool   // the operator's history has seen the target
}

// targetOf looks r's target up: one streak read when r names one.
func (l *Limiter) targetOf(ctx context.Context, r Request) (targeted, error) {
	if r.Target.IsZero() {
		return targeted{}, nil
	}
	t := targeted{
		subject: subject(ScopeTarget, r.User, r.Target.key),
		target:  subject(ScopeTarget, r.Target.key),
		user:    subject(ScopeFirstContact, r.User),
	}
	st, err := l.counters.GetStreak(ctx, seenKey(t.target))
	if err != nil {
		return targeted{}, fmt.Errorf("%w: read target history: %w", ErrUnavailable, err)
	}
	t.seen = st.Count > 0
	return t, nil
}

func (t targeted) firstContact() bool { return t.subject != "" && !t.seen }

// checkLockout applies the target's lockout: until the operator's history
// has seen the target, the first-contact lockout over the denials of
// requests to it from any user; after, the target lockout over the
// user's.
func (t targeted) checkLockout(ctx context.Context, l *Limiter, now time.Time) error {
	switch {
	case t.subject == "":
		return nil
	case t.seen:
		return l.checkLockout(ctx, ScopeTarget, denialKey(ScopeTarget, t.subject), l.limits.TargetLockout, now)
	}
	return l.checkLockout(ctx, ScopeFirstContact, denialKey(ScopeFirstContact, t.target), l.limits.FirstContactLockout, now)
}

// rates are the target's rates a request counts against.
func (t targeted) rates(l *Limiter) []scoped {
	if t.subject == "" {
		return nil
	}
	rs := []scoped{{scope: ScopeTarget, subject: t.subject, rate: l.limits.Target}}
	if !t.seen {
		rs = append(rs,
			scoped{scope: ScopeFirstContact, subject: t.target, rate: l.limits.FirstContactTarget},
			scoped{scope: ScopeFirstContact, subject: t.user, rate: l.limits.FirstContact})
	}
	return rs
}

// decidedTarget records a decision on a request to a target. A denial
// extends the user's run of denials of the target and, while the target
// is a first contact, the target's own run; an approval ends both and
// makes the target one the operator's history has seen.
func (l *Limiter) decidedTarget(ctx context.Context, r Request, approved bool) error {
	t, err := l.targetOf(ctx, r)
	if err != nil || t.subject == "" {
		return err
	}
	if approved {
		return l.introduce(ctx, t)
	}
	now := l.now()
	if l.limits.TargetLockout.After >= 0 {
		if _, err := l.counters.IncrStreak(ctx, denialKey(ScopeTarget, t.subject), now); err != nil {
			return fmt.Errorf("%w: record denial: %w", ErrUnavailable, err)
		}
	}
	if !t.seen && l.limits.FirstContactLockout.After >= 0 {
		if _, err := l.counters.IncrStreak(ctx, denialKey(ScopeFirstContact, t.target), now); err != nil {
			return fmt.Errorf("%w: record denial: %w", ErrUnavailable, err)
		}
	}
	return nil
}

// Introduce makes t a target the operator's history has seen, as an
// approval of a request to it would, and ends its first-contact run of
// denials: an operator imports the team's known recipients, domains and
// repositories with it, or lifts a first-contact lockout they judge
// mistaken. Introducing a target twice is harmless. An error wraps
// [ErrUnavailable], or [ErrInvalidTarget] when t is the zero Target.
func (l *Limiter) Introduce(ctx context.Context, t Target) error {
	if t.IsZero() {
		return fmt.Errorf("%w: introduce needs a target", ErrInvalidTarget)
	}
	return l.introduce(ctx, targeted{target: subject(ScopeTarget, t.key)})
}

// introduce marks t.target seen and ends its first-contact run and, when
// t names a user, the user's run of denials of it.
func (l *Limiter) introduce(ctx context.Context, t targeted) error {
	if !t.seen {
		st, err := l.counters.GetStreak(ctx, seenKey(t.target))
		if err != nil {
			return fmt.Errorf("%w: read target history: %w", ErrUnavailable, err)
		}
		if st.Count == 0 {
			if _, err := l.counters.IncrStreak(ctx, seenKey(t.target), l.now()); err != nil {
				return fmt.Errorf("%w: record target history: %w", ErrUnavailable, err)
			}
		}
	}
	keys := []string{denialKey(ScopeFirstContact, t.target)}
	if t.subject != "" {
		keys = append(keys, denialKey(ScopeTarget, t.subject))
	}
	for _, key := range keys {
		// Most approvals end no run: a read spares the store a write.
		run, err := l.counters.GetStreak(ctx, key)
		if err != nil {
			return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
		}
		if run.Count == 0 {
			continue
		}
		if err := l.counters.ResetStreak(ctx, key); err != nil {
			return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
		}
	}
	return nil
}

// seenKey names the mark that the operator's history has seen a target:
// a streak whose count is above zero once a request to it was approved
// or it was introduced. Nothing in flood ever resets it.
func seenKey(h string) string {
	return "flood/v2/seen/" + string(ScopeTarget) + "/" + h
}
