package flood

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/store"
)

// MaxApprovers bounds [Request.Approvers]: each distinct approver costs
// two counter operations of an admission's batch. A longer list is refused
// with [ErrUnavailable].
const MaxApprovers = 256

// Request names who asks for an approval and who will be asked: the
// principal and session of the call, and the people its prompt reaches.
type Request struct {
	User    string // the user the call runs on behalf of
	Agent   string // the agent that proposed it
	Session string // the agent's session, in the agent's own namespace

	// Approvers lists the people the prompt will reach, never empty when
	// a person is asked. Duplicates count once. [Limiter.Decided] ignores
	// it.
	Approvers []string

	// Target is what the effect reaches outside the team, for the limits
	// keyed by the user and the target and the first-contact rule; the
	// zero Target (the default) counts against none of them. Pass the
	// same Target to [Limiter.Decided].
	Target Target
}

// check refuses a request that cannot be keyed: the gate must name the
// whole principal, and for an admission the people it will prompt.
func (r Request) check(admit bool) error {
	switch {
	case r.User == "" || r.Agent == "" || r.Session == "":
		return fmt.Errorf("%w: request names no user, agent or session", ErrUnavailable)
	case !admit:
		return nil
	case len(r.Approvers) == 0:
		return fmt.Errorf("%w: request names no approver", ErrUnavailable)
	case len(r.Approvers) > MaxApprovers:
		return fmt.Errorf("%w: request names more than %d approvers", ErrUnavailable, MaxApprovers)
	case slices.Contains(r.Approvers, ""):
		return fmt.Errorf("%w: request names an empty approver", ErrUnavailable)
	}
	return nil
}

// principal is the hashed subject of each principal scope, narrowest
// first.
type principal struct {
	session, agent, user string
}

func (r Request) principal() principal {
	return principal{
		session: subject(ScopeSession, r.User, r.Agent, r.Session),
		agent:   subject(ScopeAgent, r.User, r.Agent),
		user:    subject(ScopeUser, r.User),
	}
}

// scoped is one principal scope's subject with its limits.
type scoped struct {
	scope   Scope
	subject string
	rate    Rate
	lockout Lockout
}

func (l *Limiter) scopes(p principal) [3]scoped {
	return [3]scoped{
		{ScopeSession, p.session, l.limits.Session, l.limits.SessionLockout},
		{ScopeAgent, p.agent, l.limits.Agent, l.limits.AgentLockout},
		{ScopeUser, p.user, l.limits.User, l.limits.UserLockout},
	}
}

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
// of parking it (a merged duplicate never counts against a cap). Park must
// count a session's pending tickets per (user, session), never by the bare
// session id, so that tenants sharing a session id never share a cap.
func (l *Limiter) Caps() store.Caps { return l.limits.caps() }

// Admit decides whether r may prompt its approvers now. It returns nil, or
// a [*LimitError] wrapping [ErrLockedOut] or [ErrRateLimited], or an error
// wrapping [ErrUnavailable] when r is incomplete or the counters cannot be
// read or written: any error means "not admitted".
//
// Lockouts (session, agent, user) are checked first and cost nothing to
// the rates. Then the request counts against the session's, the agent's
// and the user's rates and, once for each distinct approver, against that
// approver's inflow; when any of them refuses, every count it took is
// given back, so a refused request spends nobody's rate. Call Admit once
// per request that would reach an approver, before store.Tickets.Park.
//
// With every limit on, an admission costs one read of three streaks (a
// lockout each, in one round trip where the store is a
// [store.StreakReader]) and one batch of 2×(3 + a) counter operations
// for a distinct approvers, a count and a read of the previous window
// per rate, in one store transaction ([store.Counters.AddCounts]); a
// refusal one more batch, the refund. A request that names
// a [Target] costs 4 more, 8 more for a first contact: the history read,
// the target's lockout and its rates.
func (l *Limiter) Admit(ctx context.Context, r Request) error {
	_, err := l.Admission(ctx, r)
	return err
}

// Admission is [Limiter.Admit] that also says how the gate should handle
// an admitted request: whether it is a first contact (see [Admission]).
// A request without a [Target] is never one.
func (l *Limiter) Admission(ctx context.Context, r Request) (Admission, error) {
	if err := r.check(true); err != nil {
		return Admission{}, err
	}
	now := l.now()
	if now.IsZero() {
		return Admission{}, fmt.Errorf("%w: no time to count in", ErrUnavailable)
	}
	scopes := l.scopes(r.principal())
	if err := l.checkLockouts(ctx, scopes[:], now); err != nil {
		return Admission{}, err
	}
	tk, err := l.targetOf(ctx, r)
	if err != nil {
		return Admission{}, err
	}
	if err := tk.checkLockout(ctx, l, now); err != nil {
		return Admission{}, err
	}
	adm := Admission{FirstContact: tk.firstContact()}

	rates := append(scopes[:0:0], scopes[:]...)
	rates = append(rates, tk.rates(l)...)
	if l.limits.ApproverInflow.N >= 0 {
		approvers := slices.Clone(r.Approvers)
		slices.Sort(approvers)
		for _, a := range slices.Compact(approvers) {
			rates = append(rates, scoped{scope: ScopeApprover, subject: subject(ScopeApprover, a), rate: l.limits.ApproverInflow})
		}
	}
	if err := l.takeAll(ctx, rates, now); err != nil {
		return Admission{}, err
	}
	return adm, nil
}

// takeAll counts the request against every rate in one batch of counter
// operations (each rate's current window, and a read of its previous one)
// and decides each rate in order with the sliding estimate. When any
// refuses, every count is given back in one more batch, so a refused
// request spends nobody's rate, and the first refusing scope is the
// answer. Rates with a negative N are off.
func (l *Limiter) takeAll(ctx context.Context, rates []scoped, now time.Time) error {
	rates = slices.DeleteFunc(rates, func(s scoped) bool { return s.rate.N < 0 })
	if len(rates) == 0 {
		return nil
	}
	ops := make([]store.CountOp, 0, 2*len(rates))
	windows := make([]window, len(rates))
	for i, s := range rates {
		w := windowAt(now, s.rate.Per)
		windows[i] = w
		key := rateKey(s.scope, s.rate, s.subject)
		ops = append(ops, store.CountOp{Key: key, Window: w.start, Delta: 1},
			store.CountOp{Key: key, Window: w.start.Add(-s.rate.Per)})
	}
	counts, err := l.counters.AddCounts(ctx, ops)
	if err != nil {
		return fmt.Errorf("%w: count request: %w", ErrUnavailable, err)
	}
	for i, s := range rates {
		cur, prev := max(counts[2*i], 0), max(counts[2*i+1], 0)
		if windows[i].admits(cur, prev, s.rate.N) {
			continue
		}
		// A refund that fails leaves the counts too high: stricter, never
		// looser, so its error is dropped.
		refund := make([]store.CountOp, 0, len(rates))
		for j := range rates {
			refund = append(refund, store.CountOp{Key: ops[2*j].Key, Window: ops[2*j].Window, Delta: -1})
		}
		_, _ = l.counters.AddCounts(context.WithoutCancel(ctx), refund)
		return &LimitError{Err: ErrRateLimited, Scope: s.scope, RetryAfter: windows[i].retryAfter(cur-1, prev, s.rate.N)}
	}
	return nil
}

// Decided records an approver's decision on a request of r's principal
// and session (r.Approvers is ignored). A denial extends the runs of
// denials of the session, the agent and the user, towards their
// lockouts; an approval ends all three runs. Expired and cancelled tickets
// are not decisions and are never reported: nobody said no.
//
// An error wraps [ErrUnavailable]. A denial that could not be recorded
// should fail the deny, so that lockouts are not silently lost; an
// approval whose runs could not be ended leaves them longer, which errs on
// the strict side.
func (l *Limiter) Decided(ctx context.Context, r Request, approved bool) error {
	if err := r.check(false); err != nil {
		return err
	}
	scopes := l.scopes(r.principal())
	if err := l.decidedTarget(ctx, r, approved); err != nil {
		return err
	}
	if !approved {
		now := l.now()
		for _, s := range scopes {
			if s.lockout.After < 0 {
				continue
			}
			if _, err := l.counters.IncrStreak(ctx, denialKey(s.scope, s.subject), now); err != nil {
				return fmt.Errorf("%w: record denial: %w", ErrUnavailable, err)
			}
		}
		return nil
	}
	// Most approvals end no run of denials: one read of the three spares
	// the store a write. A denial racing in after the read stays counted,
	// which errs on the strict side. Runs are ended even under a lockout
	// that is off, so that none recorded under other limits lingers.
	var keys [len(scopes)]string
	for i, s := range scopes {
		keys[i] = denialKey(s.scope, s.subject)
	}
	runs, err := store.GetStreaks(ctx, l.counters, keys[:])
	if err != nil {
		return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
	}
	for i, key := range keys {
		if runs[i].Count == 0 {
			continue
		}
		if err := l.counters.ResetStreak(ctx, key); err != nil {
			return fmt.Errorf("%w: record approval: %w", ErrUnavailable, err)
		}
	}
	return nil
}

// checkLockouts applies the lockouts of scopes that are on, with one read
// of their runs of denials: the first scope, in order, whose lockout
// holds is the refusal.
func (l *Limiter) checkLockouts(ctx context.Context, scopes []scoped, now time.Time) error {
	keys := make([]string, 0, len(scopes))
	on := make([]scoped, 0, len(scopes))
	for _, s := range scopes {
		if s.lockout.After < 0 {
			continue
		}
		keys = append(keys, denialKey(s.scope, s.subject))
		on = append(on, s)
	}
	if len(keys) == 0 {
		return nil
	}
	runs, err := store.GetStreaks(ctx, l.counters, keys)
	if err != nil {
		return fmt.Errorf("%w: read denials: %w", ErrUnavailable, err)
	}
	for i, s := range on {
		if err := lockedOut(s.scope, runs[i], s.lockout, now); err != nil {
			return err
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
	return lockedOut(scope, st, lo, now)
}

// lockedOut is checkLockout on the run st, already read.
func lockedOut(scope Scope, st store.Streak, lo Lockout, now time.Time) error {
	if st.Count < lo.After {
		return nil
	}
	until := st.Last.Add(lo.For)
	if !now.Before(until) {
		return nil
	}
	return &LimitError{Err: ErrLockedOut, Scope: scope, RetryAfter: until.Sub(now)}
}

// rateKeys starts the name of every counter a [Limiter]'s rates count in
// (rateKey).
const rateKeys = "flood/v2/rate/"

// Prune deletes the counts of rates that no longer matter, and returns
// how many keys it deleted. A rate's key names its scope and window
// (rateKey), so each of l's rates is pruned by its own window: its keys
// whose newest window started before now less twice that window (the
// sliding estimate reads a window and the one before it) and
// [store.CountHorizon] (so a clock behind by up to that still counts
// against the present). Keys of rates other limits on the same store
// count in, l's own before a change of limits or another service's, are
// pruned only past twice [MaxRateWindow] and the horizon, when no
// limit's count can matter. A key a request counts in again starts from
// nothing, as it would have. Prune deletes nothing when the counters do
// not implement [store.CountPruner], and at most ten times
// [store.MaxPruneKeys] keys per window a call; the gate calls it from
// [gate.Gate.Maintain].
func (l *Limiter) Prune(ctx context.Context) (int, error) {
	p, ok := l.counters.(store.CountPruner)
	if !ok {
		return 0, nil
	}
	now := l.now()
	type rated struct {
		scope Scope
		rate  Rate
	}
	own := []rated{{ScopeSession, l.limits.Session}, {ScopeAgent, l.limits.Agent}, {ScopeUser, l.limits.User},
		{ScopeApprover, l.limits.ApproverInflow}, {ScopeTarget, l.limits.Target},
		{ScopeFirstContact, l.limits.FirstContact}, {ScopeFirstContact, l.limits.FirstContactTarget}}
	seen := map[string]bool{}
	total := 0
	prune := func(prefix string, before time.Time) error {
		if seen[prefix] {
			return nil
		}
		seen[prefix] = true
		for range 10 {
			n, err := p.PruneCounts(ctx, prefix, before, store.MaxPruneKeys)
			total += n
			if err != nil {
				return fmt.Errorf("flood: prune: %w: %w", ErrUnavailable, err)
			}
			if n < store.MaxPruneKeys {
				return nil
			}
		}
		return nil
	}
	for _, r := range own {
		if r.rate.N <= 0 || r.rate.Per <= 0 {
			continue
		}
		if err := prune(rateKeyPrefix(r.scope, r.rate), now.Add(-2*r.rate.Per-store.CountHorizon)); err != nil {
			return total, err
		}
	}
	if err := prune(rateKeys, now.Add(-2*MaxRateWindow-store.CountHorizon)); err != nil {
		return total, err
	}
	return total, nil
}
