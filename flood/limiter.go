package flood

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// Limiter admits approval requests under [Limits]. Its state lives in the
// store's counters, never in the Limiter, so every gate replica that shares
// a store shares the limits. It is safe for concurrent use.
type Limiter struct {
	counters store.Counters
	limits   Limits
	now      func() time.Time
}

// New returns a Limiter keeping its counts in counters, with limits (zero
// fields take the defaults) and the clock now. It fails with
// [ErrInvalidLimits] when [Limits.Validate] refuses limits.
func New(counters store.Counters, limits Limits, now func() time.Time) (*Limiter, error) {
	if counters == nil || now == nil {
		return nil, errors.New("flood: new: counters and clock are required")
	}
	if err := limits.Validate(); err != nil {
		return nil, fmt.Errorf("flood: new: %w", err)
	}
	return &Limiter{counters: counters, limits: limits.withDefaults(), now: now}, nil
}

// Limits returns the limits in force, defaults filled in.
func (l *Limiter) Limits() Limits { return l.limits }

// Caps returns the pending caps for store.Tickets.Park. The gate passes
// them on every Park; the store enforces them in the same transaction that
// parks the ticket, and merges a duplicate of a live pending ticket instead
// of parking it (a merged duplicate never counts against a cap).
func (l *Limiter) Caps() store.Caps { return l.limits.caps() }

// Admit decides whether the session and user may ask an approver now. It
// returns nil, or a [*LimitError] wrapping [ErrLockedOut] or
// [ErrRateLimited], or an error wrapping [ErrUnavailable] when the
// counters cannot be read or written: any error means "not admitted".
//
// Lockouts are checked first and cost nothing to the rate. An admitted
// request counts against the session's and the user's rates; a refused one
// counts against neither. Call Admit once per request that would reach an
// approver, before store.Tickets.Park.
func (l *Limiter) Admit(ctx context.Context, session, user string) error {
	if session == "" || user == "" {
		return fmt.Errorf("%w: request names no session or no user", ErrUnavailable)
	}
	now := l.now()
	checks := []struct {
		scope   Scope
		id      string // hashed
		lockout Lockout
		rate    Rate
	}{
		{ScopeSession, hashID(session), l.limits.SessionLockout, l.limits.Session},
		{ScopeUser, hashID(user), l.limits.UserLockout, l.limits.User},
	}
	for _, c := range checks {
		if err := l.checkLockout(ctx, c.scope, denialKey(c.scope, c.id), c.lockout, now); err != nil {
			return err
		}
	}
	var taken []counted
	refund := func() {
		// A refund that fails leaves the count too high: stricter, never
		// looser, so its error is dropped.
		for _, t := range taken {
			_, _ = l.counters.AddCount(ctx, t.key, t.window, -1)
		}
	}
	for _, c := range checks {
		if c.rate.N < 0 {
			continue
		}
		t, retry, err := l.take(ctx, rateKey(c.scope, c.rate, c.id), c.rate, now)
		if t.key != "" {
			taken = append(taken, t)
		}
		if err != nil {
			refund()
			return err
		}
		if retry > 0 {
			refund()
			return &LimitError{Err: ErrRateLimited, Scope: c.scope, RetryAfter: retry}
		}
	}
	return nil
}

// Denied records that an approver denied a request of session and user.
// Expired and cancelled tickets are not denials: nobody said no.
func (l *Limiter) Denied(ctx context.Context, session, user string) error {
	if session == "" || user == "" {
		return fmt.Errorf("%w: denial names no session or no user", ErrUnavailable)
	}
	now := l.now()
	for _, c := range []struct {
		scope   Scope
		id      string
		lockout Lockout
	}{{ScopeSession, hashID(session), l.limits.SessionLockout}, {ScopeUser, hashID(user), l.limits.UserLockout}} {
		if c.lockout.After < 0 {
			continue
		}
		if _, err := l.counters.IncrStreak(ctx, denialKey(c.scope, c.id), now); err != nil {
			return fmt.Errorf("%w: record denial: %w", ErrUnavailable, err)
		}
	}
	return nil
}

// Approved records that an approver approved a request of session and
// user, which ends both runs of denials.
func (l *Limiter) Approved(ctx context.Context, session, user string) error {
	if session == "" || user == "" {
		return fmt.Errorf("%w: approval names no session or no user", ErrUnavailable)
	}
	for _, key := range []string{denialKey(ScopeSession, hashID(session)), denialKey(ScopeUser, hashID(user))} {
		// Most approvals end no run of denials: a read spares the store a
		// write. A denial racing in after the read stays counted, which
		// errs on the strict side.
		st, err := l.counters.GetStreak(ctx, key)
		if err != nil {
			return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
		}
		if st.Count == 0 {
			continue
		}
		if err := l.counters.ResetStreak(ctx, key); err != nil {
			return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
		}
	}
	return nil
}

// checkLockout refuses when the scope's run of denials reached lo.After
// and the latest denial is less than lo.For ago. A run that reached
// lo.After stays there until an approval: after the lockout ends, the next
// denial locks again at once.
func (l *Limiter) checkLockout(ctx context.Context, scope Scope, key string, lo Lockout, now time.Time) error {
	if lo.After < 0 {
		return nil
	}
	st, err := l.counters.GetStreak(ctx, key)
	if err != nil {
		return fmt.Errorf("%w: read denials: %w", ErrUnavailable, err)
	}
	if st.Count < lo.After {
		return nil
	}
	until := st.Last.Add(lo.For)
	if !now.Before(until) {
		return nil
	}
	return &LimitError{Err: ErrLockedOut, Scope: scope, RetryAfter: until.Sub(now)}
}
