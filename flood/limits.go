package flood

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// Default limits, taken by the zero fields of [Limits]. They are sized for
// people: seed figures put real review at about a minute per approval, so
// a person asked more than about thirty times an hour is no longer reading.
// A rate of "N per window" admits at most N in each aligned window, fewer
// than 2×N in any span of one window's length, and about N−1 per window
// to a steady asker (see [Rate]).
var (
	// DefaultSessionRate admits 10 approval requests per session per 10
	// minutes: a task rarely needs more, a looping or hijacked agent does.
	DefaultSessionRate = Rate{N: 10, Per: 10 * time.Minute}
	// DefaultAgentRate admits 20 approval requests per agent of a user per
	// hour, over all of that agent's sessions, so an agent that opens fresh
	// sessions gains nothing, and one agent cannot spend all of its
	// user's allowance.
	DefaultAgentRate = Rate{N: 20, Per: time.Hour}
	// DefaultUserRate admits 30 approval requests per user per hour, over
	// all of the user's agents and sessions.
	DefaultUserRate = Rate{N: 30, Per: time.Hour}
	// DefaultApproverInflow lets 30 prompts per hour reach one approver,
	// whichever users' agents asked: about what a person can read.
	DefaultApproverInflow = Rate{N: 30, Per: time.Hour}
	// DefaultSessionLockout locks a session for 15 minutes after its
	// approvers denied 3 of its requests in a row.
	DefaultSessionLockout = Lockout{After: 3, For: 15 * time.Minute}
	// DefaultAgentLockout locks every session of one agent of a user for
	// 30 minutes after 4 denials in a row across them.
	DefaultAgentLockout = Lockout{After: 4, For: 30 * time.Minute}
	// DefaultUserLockout locks every agent and session of a user for an
	// hour after 5 denials in a row across them.
	DefaultUserLockout = Lockout{After: 5, For: time.Hour}
)

// Default pending caps, taken by the zero fields of [Limits].
const (
	DefaultPendingPerSession = 5
	DefaultPendingPerUser    = 20
)

// Rate is a number of admissions per window: at most N requests are
// admitted in each window of length Per (windows are aligned to multiples
// of Per since the Unix epoch, so every replica agrees on them), and a
// sliding estimate over the previous window smooths the boundary; see the
// package documentation. The estimate holds any span of length Per to
// fewer than 2×N admissions (N at the end of one window, then the next
// window's share as the first ages out), and admits a client asking
// exactly N times per window, evenly spaced, about N−1 times per window:
// it finds the previous window's N still almost wholly inside the sliding
// window. For N 1 that is one admission every two windows.
//
// The zero Rate takes the default. N below zero means no limit.
type Rate struct {
	N   int64
	Per time.Duration
}

// Lockout refuses admission for For after After consecutive denials by
// approvers. An approval reported to [Limiter.Decided] ends a run of
// denials.
//
// The zero Lockout takes the default. After below zero means no lockout.
type Lockout struct {
	After int
	For   time.Duration
}

// Limits are the flood limits of a [Limiter]. The zero value is the
// defaults above; a negative count turns that limit off.
//
// Every limit is keyed by the principal: a session is the triple (user,
// agent, session), so two tenants that happen to use the same session id
// never share a count, and an agent is the pair (user, agent). The limits
// on targets are keyed by (user, target), or by the target alone while it
// is a first contact.
//
// Pending caps and the merging of duplicate requests are decided by the
// store, in the same transaction that parks a ticket (store.Tickets.Park):
// the Limiter only carries the caps, and [Limiter.Caps] hands them to the
// gate for Park.
type Limits struct {
	Session        Rate    // admissions per (user, agent, session)
	Agent          Rate    // admissions per (user, agent), over the agent's sessions
	User           Rate    // admissions per user, over all agents and sessions
	ApproverInflow Rate    // prompts that reach one approver, from anyone
	SessionLockout Lockout // denials in a row that lock a session
	AgentLockout   Lockout // denials in a row that lock all of an agent's sessions
	UserLockout    Lockout // denials in a row that lock all of a user's agents

	// Target, TargetLockout, FirstContact, FirstContactTarget and
	// FirstContactLockout count only requests that name a [Target]; see
	// the package documentation. Zero fields take the defaults; a
	// negative count turns one off.
	Target              Rate    // admissions per (user, target), over every agent and session
	TargetLockout       Lockout // denials in a row that lock a (user, target) the operator's history has seen
	FirstContact        Rate    // admissions per user of requests to targets the operator's history has not seen
	FirstContactTarget  Rate    // admissions per target, from any user, while the operator's history has not seen it
	FirstContactLockout Lockout // denials in a row, from any user, that lock a target the operator's history has not seen

	// PendingPerSession and PendingPerUser cap the live pending tickets.
	// Zero takes the default; below zero means no cap.
	PendingPerSession int
	PendingPerUser    int
}

// minWindow bounds Rate.Per and Lockout.For from below: shorter windows
// measure scheduling noise, not people.
const minWindow = time.Millisecond

// MaxRateWindow bounds Rate.Per: every Limiter on a store can then tell
// when any rate's count has stopped mattering, whoever's limits counted
// it ([Limiter.Prune]).
const MaxRateWindow = 31 * 24 * time.Hour

// Validate reports whether l is usable: every Rate either zero, off
// (N < 0) or with N > 0 and Per a whole number of microseconds from a
// millisecond to [MaxRateWindow]; every Lockout either zero, off (After < 0), or with
// After > 0 and For at least a millisecond (For zero takes the default
// duration).
func (l Limits) Validate() error {
	for _, r := range []struct {
		name string
		r    Rate
	}{{"session rate", l.Session}, {"agent rate", l.Agent}, {"user rate", l.User}, {"approver inflow", l.ApproverInflow},
		{"target rate", l.Target}, {"first-contact rate", l.FirstContact},
		{"first-contact target rate", l.FirstContactTarget}} {
		switch {
		case r.r.N < 0 || r.r == Rate{}:
		case r.r.N == 0:
			return fmt.Errorf("%w: %s: window set without a count", ErrInvalidLimits, r.name)
		case r.r.Per < minWindow || r.r.Per%time.Microsecond != 0:
			return fmt.Errorf("%w: %s: window must be whole microseconds, at least %v", ErrInvalidLimits, r.name, minWindow)
		case r.r.Per > MaxRateWindow:
			return fmt.Errorf("%w: %s: window must be at most %v", ErrInvalidLimits, r.name, MaxRateWindow)
		}
	}
	for _, lo := range []struct {
		name string
		l    Lockout
	}{{"session lockout", l.SessionLockout}, {"agent lockout", l.AgentLockout}, {"user lockout", l.UserLockout},
		{"target lockout", l.TargetLockout}, {"first-contact lockout", l.FirstContactLockout}} {
		switch {
		case lo.l.After < 0 || lo.l == Lockout{}:
		case lo.l.After == 0:
			return fmt.Errorf("%w: %s: duration set without a count", ErrInvalidLimits, lo.name)
		case lo.l.For != 0 && lo.l.For < minWindow:
			return fmt.Errorf("%w: %s: duration must be at least %v", ErrInvalidLimits, lo.name, minWindow)
		}
	}
	return nil
}

// withDefaults returns l with every zero field replaced by its default.
func (l Limits) withDefaults() Limits {
	l.Session = l.Session.withDefault(DefaultSessionRate)
	l.Agent = l.Agent.withDefault(DefaultAgentRate)
	l.User = l.User.withDefault(DefaultUserRate)
	l.ApproverInflow = l.ApproverInflow.withDefault(DefaultApproverInflow)
	l.SessionLockout = l.SessionLockout.withDefault(DefaultSessionLockout)
	l.AgentLockout = l.AgentLockout.withDefault(DefaultAgentLockout)
	l.UserLockout = l.UserLockout.withDefault(DefaultUserLockout)
	l.Target = l.Target.withDefault(DefaultTargetRate)
	l.TargetLockout = l.TargetLockout.withDefault(DefaultTargetLockout)
	l.FirstContact = l.FirstContact.withDefault(DefaultFirstContactRate)
	l.FirstContactTarget = l.FirstContactTarget.withDefault(DefaultFirstContactTargetRate)
	l.FirstContactLockout = l.FirstContactLockout.withDefault(DefaultFirstContactLockout)
	if l.PendingPerSession == 0 {
		l.PendingPerSession = DefaultPendingPerSession
	}
	if l.PendingPerUser == 0 {
		l.PendingPerUser = DefaultPendingPerUser
	}
	return l
}

func (r Rate) withDefault(d Rate) Rate {
	if r == (Rate{}) {
		return d
	}
	return r
}

func (lo Lockout) withDefault(d Lockout) Lockout {
	switch {
	case lo == Lockout{}:
		return d
	case lo.After > 0 && lo.For == 0:
		lo.For = d.For
	}
	return lo
}

// caps converts the pending caps to the store's, where zero means no cap.
func (l Limits) caps() store.Caps {
	return store.Caps{PerSession: max(l.PendingPerSession, 0), PerUser: max(l.PendingPerUser, 0)}
}
