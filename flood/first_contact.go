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
	// DefaultTargetLockout locks one user's requests to a target their
	// history has seen for a day after 3 denials in a row of requests to
	// it. Only an approval of a request to that target ends the run:
	// approvals of the user's other work do not, unlike the principal
	// lockouts, so benign work mixed into a flood does not reset it.
	DefaultTargetLockout = Lockout{After: 3, For: 24 * time.Hour}
	// DefaultFirstContactRate admits 5 approval requests per hour per user
	// to targets their history has not seen: an attacker that rotates over
	// targets it controls meets this limit.
	DefaultFirstContactRate = Rate{N: 5, Per: time.Hour}
	// DefaultFirstContactTargetRate admits one approval request per hour
	// per user to one target their history has not seen: until a person
	// has approved a request to it, a new target gets one card at a time,
	// so a burst to it is one card, not one per request.
	DefaultFirstContactTargetRate = Rate{N: 1, Per: time.Hour}
	// DefaultFirstContactLockout locks one user's requests to a target
	// their history has not seen for a day after one denial: an approver
	// who refused a first contact has said what they think of it, and a
	// flood to it gets one card, not one per burst.
	DefaultFirstContactLockout = Lockout{After: 1, For: 24 * time.Hour}
)

// The scopes of the limits on targets.
const (
	// ScopeTarget is one target on behalf of one user, over all of the
	// user's agents and sessions: [Limits.Target], [Limits.TargetLockout]
	// and [Limits.FirstContactLockout].
	ScopeTarget Scope = "target"
	// ScopeFirstContact is one user's requests to targets their history
	// has not seen: [Limits.FirstContact].
	ScopeFirstContact Scope = "first-contact"
)

// Admission says how the gate should handle a request [Limiter.Admission]
// admitted.
type Admission struct {
	// FirstContact is set when the request names a [Target] that its
	// user's history has not seen: no request of the user to it has been
	// approved, and nobody introduced it ([Limiter.Introduce]). The gate
	// should handle it more strictly than a request to a known target,
	// for example by asking a second approver.
	FirstContact bool
}

// targeted is a request's target, looked up: its subject and whether the
// user's history has seen it. The zero targeted is a request without a
// target.
type targeted struct {
	subject string // (user, target); "" when the request has none
	user    string // the first-contact subject of the user
	seen    bool
}

// targetOf looks r's target up: one streak read when r names one.
func (l *Limiter) targetOf(ctx context.Context, r Request) (targeted, error) {
	if r.Target.IsZero() {
		return targeted{}, nil
	}
	t := targeted{
		subject: subject(ScopeTarget, r.User, r.Target.key),
		user:    subject(ScopeFirstContact, r.User),
	}
	st, err := l.counters.GetStreak(ctx, seenKey(t.subject))
	if err != nil {
		return targeted{}, fmt.Errorf("%w: read target history: %w", ErrUnavailable, err)
	}
	t.seen = st.Count > 0
	return t, nil
}

func (t targeted) firstContact() bool { return t.subject != "" && !t.seen }

// lockout is the lockout in force for the target: the first-contact one
// until the user's history has seen it.
func (t targeted) lockout(l *Limiter) Lockout {
	if t.seen {
		return l.limits.TargetLockout
	}
	return l.limits.FirstContactLockout
}

func (t targeted) checkLockout(ctx context.Context, l *Limiter, now time.Time) error {
	if t.subject == "" {
		return nil
	}
	return l.checkLockout(ctx, ScopeTarget, denialKey(ScopeTarget, t.subject), t.lockout(l), now)
}

// rates are the target's rates a request counts against.
func (t targeted) rates(l *Limiter) []scoped {
	if t.subject == "" {
		return nil
	}
	rs := []scoped{{scope: ScopeTarget, subject: t.subject, rate: l.limits.Target}}
	if !t.seen {
		// The per-target first-contact count is keyed under the
		// first-contact scope, apart from the target rate's.
		rs = append(rs,
			scoped{scope: ScopeFirstContact, subject: t.subject, rate: l.limits.FirstContactTarget},
			scoped{scope: ScopeFirstContact, subject: t.user, rate: l.limits.FirstContact})
	}
	return rs
}

// decidedTarget records a decision on a request to a target: a denial
// extends the target's run of denials, an approval ends it and makes the
// target one the user's history has seen.
func (l *Limiter) decidedTarget(ctx context.Context, r Request, approved bool) error {
	if r.Target.IsZero() {
		return nil
	}
	sub := subject(ScopeTarget, r.User, r.Target.key)
	key := denialKey(ScopeTarget, sub)
	if !approved {
		if l.limits.TargetLockout.After < 0 && l.limits.FirstContactLockout.After < 0 {
			return nil
		}
		if _, err := l.counters.IncrStreak(ctx, key, l.now()); err != nil {
			return fmt.Errorf("%w: record denial: %w", ErrUnavailable, err)
		}
		return nil
	}
	return l.introduce(ctx, sub)
}

// Introduce makes t a target the user's history has seen, as an approval
// of a request to it would, and ends its run of denials: an operator
// imports the team's known recipients, domains and repositories with it,
// or lifts a first-contact lockout they judge mistaken. Introducing a
// target twice is harmless. An error wraps [ErrUnavailable], or
// [ErrInvalidTarget] when user is empty or t is the zero Target.
func (l *Limiter) Introduce(ctx context.Context, user string, t Target) error {
	if user == "" || t.IsZero() {
		return fmt.Errorf("%w: introduce needs a user and a target", ErrInvalidTarget)
	}
	return l.introduce(ctx, subject(ScopeTarget, user, t.key))
}

func (l *Limiter) introduce(ctx context.Context, sub string) error {
	seen := seenKey(sub)
	st, err := l.counters.GetStreak(ctx, seen)
	if err != nil {
		return fmt.Errorf("%w: read target history: %w", ErrUnavailable, err)
	}
	if st.Count == 0 {
		if _, err := l.counters.IncrStreak(ctx, seen, l.now()); err != nil {
			return fmt.Errorf("%w: record target history: %w", ErrUnavailable, err)
		}
	}
	key := denialKey(ScopeTarget, sub)
	run, err := l.counters.GetStreak(ctx, key)
	if err != nil {
		return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
	}
	if run.Count == 0 {
		return nil
	}
	if err := l.counters.ResetStreak(ctx, key); err != nil {
		return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
	}
	return nil
}

// seenKey names the mark that the user's history has seen a target: a
// streak whose count is above zero once a request to it was approved or
// it was introduced. Nothing in flood ever resets it.
func seenKey(h string) string {
	return "flood/v2/seen/" + string(ScopeTarget) + "/" + h
}
