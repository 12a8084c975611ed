package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentstepup/asu/flood"
)

// ErrInvalid is wrapped by every refusal of a [Config]: a parameter out of
// range, or more work than the bounds below allow.
var ErrInvalid = errors.New("sim: invalid parameters")

// ErrBudget is wrapped when a run generated more requests or events than
// [MaxRequests] or [MaxEvents]: the parameters passed validation, but a
// rare draw went past the bound. Lower the rates or shorten the shift.
var ErrBudget = errors.New("sim: work bound exceeded")

// Bounds on the work one call of [Run] may do.
const (
	// MaxRuns bounds Config.Runs.
	MaxRuns = 100_000
	// MaxShift bounds Scenario.Shift.
	MaxShift = 24 * time.Hour
	// MaxRequests bounds the requests (benign and malicious) one shift may
	// generate. Validation refuses a scenario that expects more than
	// MaxRequests/2, so that only an extreme draw reaches the bound.
	MaxRequests = 20_000
	// MaxEvents bounds the events one shift may process.
	MaxEvents = 10 * MaxRequests
	// MaxWork bounds Runs × expected requests per shift over one call.
	MaxWork = 50_000_000
	// MaxUsers bounds Scenario.BenignUsers and Attack.Spread.
	MaxUsers = 1000
	// MaxApprovals bounds Controls.Approvals (the k of a rule of k).
	MaxApprovals = 8
	// MaxDwell bounds Controls.Dwell.
	MaxDwell = 10 * time.Minute
)

// Defaults of the scenario and of the controls.
const (
	// DefaultShift is one working day.
	DefaultShift = 8 * time.Hour
	// DefaultBenignRate is 20 benign approval requests an hour reaching
	// the approvers: a busy desk, two thirds of flood's default approver
	// inflow.
	DefaultBenignRate = 20.0
	// DefaultBenignUsers is the number of users whose agents send the
	// benign requests (one agent and one session each).
	DefaultBenignUsers = 4
	// DefaultTTL is how long a card waits for its approvers before it
	// expires: the gate's default TTL.
	DefaultTTL = 15 * time.Minute

	// DefaultAttackRate is 2 malicious requests an hour, in bursts of
	// [DefaultBurst]: a burst of four identical requests every two hours
	// on average, 16 in a shift. This is the calibrated figure of the
	// model: with the approver constants fixed first (see [Approver]), it
	// is the attack volume at which the naive queue lands in seed 001's
	// band (flooding succeeded 0.45 to 0.60 against the reference design
	// with a modelled human approver). Seed 001 does not say what flood it
	// measured; this one is our choice.
	DefaultAttackRate = 2.0
	// DefaultBurst is 4 requests sent at one instant.
	DefaultBurst = 4
	// DefaultSpread is one hijacked session.
	DefaultSpread = 1

	// DefaultDwell is the dwell time of the controls-on configuration:
	// the gate's default for external and irreversible effects
	// (gate.DefaultDwell; a test keeps them equal).
	DefaultDwell = 3 * time.Second
	// DefaultApprovals is the k of the rule of two.
	DefaultApprovals = 2
)

// Scenario is one shift: the benign requests, the attacker's, and how
// long cards wait.
type Scenario struct {
	Shift       time.Duration `json:"shift_ns"`     // length of the shift; requests arrive in [0, Shift)
	BenignRate  float64       `json:"benign_rate"`  // benign requests per hour, Poisson
	BenignUsers int           `json:"benign_users"` // users sending them, each with one agent and one session
	TTL         time.Duration `json:"ttl_ns"`       // how long a card waits before it expires
	Attack      Attack        `json:"attack"`
	Approver    Approver      `json:"approver"`
}

// Attack is the attacker's strategy. The attacker controls agents of the
// team's users (a prompt injection that reached them), and sends bursts
// of malicious requests at Poisson times.
type Attack struct {
	// Rate is malicious requests per hour, bursts included; zero means no
	// attacker.
	Rate float64 `json:"rate"`
	// Burst is how many requests each burst holds, sent at one instant.
	Burst int `json:"burst"`
	// Disguise makes every request differ a little (another amount, a
	// look-alike recipient), so no two are identical and none merges.
	// Without it the attacker repeats one call, and a copy identical to
	// a pending one from the same session merges into it.
	Disguise bool `json:"disguise"`
	// Spread is how many requesters the attacker's requests rotate over.
	Spread int `json:"spread"`
	// Scope is what differs between those requesters:
	// [flood.ScopeSession] (sessions of one hijacked agent of one user),
	// [flood.ScopeAgent] (hijacked agents of one user) or
	// [flood.ScopeUser] (one hijacked agent of each of Spread users, the
	// team's users first).
	Scope flood.Scope `json:"scope"`
}

// Controls says which of the gate's flood controls are on.
type Controls struct {
	// Flood turns on package flood: the rates, lockouts and approver
	// inflow of a [flood.Limiter] with Limits, and the store's pending
	// caps and merging of identical pending requests. Off, every request
	// becomes a card: the naive queue.
	Flood  bool         `json:"flood"`
	Limits flood.Limits `json:"limits"` // zero fields take flood's defaults; ignored when Flood is off
	// Dwell is the least time between showing a card and accepting its
	// approval; zero is off.
	Dwell time.Duration `json:"dwell_ns"`
	// Approvals is how many distinct approvers must each approve (the
	// rule of two at 2); 1 is one approver. Every card reaches all of
	// them; one denial denies it.
	Approvals int `json:"approvals"`
}

// DefaultScenario returns the documented scenario: an 8-hour shift, 20
// benign requests an hour from 4 users, an attacker in one hijacked
// session sending bursts of 4 identical malicious requests every two hours
// on average, and the default [Approver].
func DefaultScenario() Scenario {
	return Scenario{
		Shift:       DefaultShift,
		BenignRate:  DefaultBenignRate,
		BenignUsers: DefaultBenignUsers,
		TTL:         DefaultTTL,
		Attack: Attack{
			Rate:   DefaultAttackRate,
			Burst:  DefaultBurst,
			Spread: DefaultSpread,
			Scope:  flood.ScopeSession,
		},
		Approver: DefaultApprover(),
	}
}

// NaiveQueue is every control off: every request is a card for one
// approver, with no limit, no dwell and no second approver.
func NaiveQueue() Controls { return Controls{Approvals: 1} }

// AllControls is every control on at its default: flood's default limits
// (with pending caps and merging), [DefaultDwell] and a rule of
// [DefaultApprovals].
func AllControls() Controls {
	return Controls{Flood: true, Dwell: DefaultDwell, Approvals: DefaultApprovals}
}

// Named is a configuration with a name for a table.
type Named struct {
	Name     string   `json:"name"`
	Controls Controls `json:"controls"`
}

// Ablation returns the naive queue, each control of on alone, and on
// itself, so an operator sees what each control buys and costs. A control
// that on leaves off has no row of its own.
func Ablation(on Controls) []Named {
	rows := []Named{{"off (naive queue)", NaiveQueue()}}
	if on.Flood {
		rows = append(rows, Named{"flood limits only", Controls{Flood: true, Limits: on.Limits, Approvals: 1}})
	}
	if on.Dwell > 0 {
		rows = append(rows, Named{"dwell only", Controls{Dwell: on.Dwell, Approvals: 1}})
	}
	if on.Approvals > 1 {
		rows = append(rows, Named{fmt.Sprintf("rule of %d only", on.Approvals), Controls{Approvals: on.Approvals}})
	}
	return append(rows, Named{"all on", on})
}

// Validate reports whether s is usable and within the bounds.
func (s Scenario) Validate() error {
	switch {
	case s.Shift < time.Minute || s.Shift > MaxShift:
		return fmt.Errorf("%w: shift must be between 1m and %v, got %v", ErrInvalid, MaxShift, s.Shift)
	case !finiteNonNegative(s.BenignRate):
		return fmt.Errorf("%w: benign rate must be a non-negative number, got %v", ErrInvalid, s.BenignRate)
	case s.BenignUsers < 1 || s.BenignUsers > MaxUsers:
		return fmt.Errorf("%w: benign users must be between 1 and %d, got %d", ErrInvalid, MaxUsers, s.BenignUsers)
	case s.TTL < time.Second || s.TTL > MaxShift:
		return fmt.Errorf("%w: TTL must be between 1s and %v, got %v", ErrInvalid, MaxShift, s.TTL)
	}
	if err := s.Attack.validate(); err != nil {
		return err
	}
	if err := s.Approver.Validate(); err != nil {
		return err
	}
	if e := s.expectedRequests(); e > MaxRequests/2 {
		return fmt.Errorf("%w: the shift expects %.0f requests, more than %d: lower the rates or shorten the shift",
			ErrInvalid, e, MaxRequests/2)
	}
	return nil
}

func (a Attack) validate() error {
	switch {
	case !finiteNonNegative(a.Rate):
		return fmt.Errorf("%w: attack rate must be a non-negative number, got %v", ErrInvalid, a.Rate)
	case a.Rate == 0:
		return nil
	case a.Burst < 1 || a.Burst > MaxRequests:
		return fmt.Errorf("%w: burst must be between 1 and %d, got %d", ErrInvalid, MaxRequests, a.Burst)
	case a.Spread < 1 || a.Spread > MaxUsers:
		return fmt.Errorf("%w: spread must be between 1 and %d, got %d", ErrInvalid, MaxUsers, a.Spread)
	case a.Scope != flood.ScopeSession && a.Scope != flood.ScopeAgent && a.Scope != flood.ScopeUser:
		return fmt.Errorf("%w: spread scope must be session, agent or user, got %q", ErrInvalid, a.Scope)
	}
	return nil
}

// expectedRequests is the mean number of requests of one shift.
func (s Scenario) expectedRequests() float64 {
	return (s.BenignRate + s.Attack.Rate) * s.Shift.Hours()
}

// Validate reports whether c is usable: limits that flood accepts, a
// dwell in [0, MaxDwell] and 1 to MaxApprovals approvals.
func (c Controls) Validate() error {
	switch {
	case c.Approvals < 1 || c.Approvals > MaxApprovals:
		return fmt.Errorf("%w: approvals must be between 1 and %d, got %d", ErrInvalid, MaxApprovals, c.Approvals)
	case c.Dwell < 0 || c.Dwell > MaxDwell:
		return fmt.Errorf("%w: dwell must be between 0 and %v, got %v", ErrInvalid, MaxDwell, c.Dwell)
	}
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
