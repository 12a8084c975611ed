package flood

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// Sentinel errors; test with errors.Is. Every refusal of [Limiter.Admit]
// wraps exactly one of the first three, and the gate must treat any error
// from Admit as "not admitted".
var (
	// ErrRateLimited: the session, agent or user asked for more approvals
	// than its [Rate] allows, or an approver would receive more prompts
	// than [Limits.ApproverInflow] allows. The error is a [*LimitError].
	ErrRateLimited = errors.New("flood: rate limited")
	// ErrLockedOut: approvers denied too many of the session's, agent's or
	// user's requests in a row. The error is a [*LimitError].
	ErrLockedOut = errors.New("flood: locked out after repeated denials")
	// ErrUnavailable: the counters could not be read or written, or the
	// [Request] named no user, agent, session or approver, or more than
	// [MaxApprovers]. Admission fails closed.
	ErrUnavailable = errors.New("flood: cannot decide admission")

	// ErrInvalidLimits: [New] was given limits that [Limits.Validate]
	// refuses.
	ErrInvalidLimits = errors.New("flood: invalid limits")

	// ErrPendingCap is store.ErrPendingCap, the error store.Tickets.Park
	// wraps when a pending cap from [Limiter.Caps] is reached; it is
	// repeated here so a gate can test every flood refusal in one package.
	ErrPendingCap = store.ErrPendingCap
)

// Scope says whose limit refused a request.
type Scope string

// The scopes of a limit.
const (
	ScopeSession  Scope = "session"  // one session of one agent of one user
	ScopeAgent    Scope = "agent"    // one agent of one user, over its sessions
	ScopeUser     Scope = "user"     // one user, over all agents and sessions
	ScopeApprover Scope = "approver" // one person receiving prompts
)

// LimitError is a refusal by a rate limit or a lockout. It never names the
// session, agent, user or approver: the caller knows them, and logs
// should not.
type LimitError struct {
	Err        error         // ErrRateLimited or ErrLockedOut
	Scope      Scope         // whose limit was reached
	RetryAfter time.Duration // when a request could next be admitted, if nothing else changes
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v (%s); retry after %v", e.Err, e.Scope, e.RetryAfter)
}

// Unwrap returns ErrRateLimited or ErrLockedOut.
func (e *LimitError) Unwrap() error { return e.Err }
