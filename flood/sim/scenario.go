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
	// DefaultApprovals is one approver: the gate's documented setup asks
	// a quorum of two for irreversible calls only, and the simulated
	// malicious call (a payment to the attacker) is an external one.
	DefaultApprovals = 1
	// DefaultFirstContactApprovals is the approvers a first contact needs
	// when the first-contact rule is on: a second person for a target the
	// operator's history has not seen.
	DefaultFirstContactApprovals = 2
	// DefaultPractice is the share of practice requests: one card in
	// fifty, the rate the issue proposes.
	DefaultPractice = 0.02
	// MaxPractice bounds Controls.Practice.
	MaxPractice = 0.5

	// DefaultBenignFirstContact is the share of benign requests to a
	// target the operator's history has not seen. Five percent is an
	// assumption (neutral): no source we know measures how often a team's
	// external effects reach a new recipient, domain or repository. The
	// rest go to DefaultKnownTargets targets the history holds.
	DefaultBenignFirstContact = 0.05
	// DefaultKnownTargets is how many targets the operator's history
	// holds, introduced before the shift.
	DefaultKnownTargets = 10
	// DefaultAttackTargets is one target: the account the attacker wants
	// paid.
	DefaultAttackTargets = 1
)

// Scenario is one shift: the benign requests, the attacker's, and how
// long cards wait.
type Scenario struct {
	Shift       time.Duration `json:"shift_ns"`     // length of the shift; requests arrive in [0, Shift)
	BenignRate  float64       `json:"benign_rate"`  // benign requests per hour, Poisson
	BenignUsers int           `json:"benign_users"` // users sending them, each with one agent and one session
	TTL         time.Duration `json:"ttl_ns"`       // how long a card waits before it expires
	// BenignFirstContact is the share of benign requests to a target
	// the operator's history has not seen (each such target new); the rest
	// go to one of the KnownTargets targets the history holds (zero is
	// one).
	BenignFirstContact float64  `json:"benign_first_contact"`
	KnownTargets       int      `json:"known_targets"`
	Attack             Attack   `json:"attack"`
	Approver           Approver `json:"approver"`
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
	// Targets is how many targets (mail domains it controls) the
	// attacker's requests rotate over. Disguised requests spell their
	// target differently each time (case, plus-addressing, subdomains, a
	// trailing dot, full-width letters); flood.EmailTarget folds them.
	// Zero is one.
	Targets int `json:"targets"`
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

	// Targets turns on flood's limits keyed by the user and the effect's
	// target and its first-contact rule (Limits.Target, TargetLockout,
	// FirstContact, FirstContactLockout); it needs Flood. Off, requests
	// name no target, as before targets existed.
	Targets bool `json:"targets"`
	// FirstContactApprovals is how many distinct approvers a first
	// contact needs (flood reports it); 0 or at most Approvals is no
	// stricter handling. The extra approvers see first contacts only.
	FirstContactApprovals int `json:"first_contact_approvals"`
	// Practice is the share of practice requests: after each card shown,
	// with this probability, the gate places a practice card (built like
	// an attack, never executed) in every primary approver's queue, and
	// tells the approver after the decision. Approvers then miss less
	// ([Approver].PracticeMissFactor), and their catch rate on practice
	// cards is measured ([Result].PracticeCatch). 0 is off.
	Practice float64 `json:"practice"`
	// Confirm turns on active confirmation: before approving, the
	// approver picks the effect's key value among
	// [Approver].ConfirmOptions look-alikes, at [Approver].ConfirmTime.
	Confirm bool `json:"confirm"`
}

// DefaultScenario returns the documented scenario: an 8-hour shift, 20
// benign requests an hour from 4 users (5% of them to a first contact),
// an attacker in one hijacked session sending bursts of 4 identical
// malicious requests to one target every two hours on average, and the
// default [Approver].
func DefaultScenario() Scenario {
	return Scenario{
		Shift:              DefaultShift,
		BenignRate:         DefaultBenignRate,
		BenignUsers:        DefaultBenignUsers,
		TTL:                DefaultTTL,
		BenignFirstContact: DefaultBenignFirstContact,
		KnownTargets:       DefaultKnownTargets,
		Attack: Attack{
			Rate:    DefaultAttackRate,
			Burst:   DefaultBurst,
			Spread:  DefaultSpread,
			Scope:   flood.ScopeSession,
			Targets: DefaultAttackTargets,
		},
		Approver: DefaultApprover(),
	}
}

// NaiveQueue is every control off: every request is a card for one
// approver, with no limit, no dwell and no second approver.
func NaiveQueue() Controls { return Controls{Approvals: 1} }

// AllControls is every control on at its default: flood's default limits
// (with pending caps and merging) including the target limits and the
// first-contact rule with a second approver for a first contact,
// [DefaultDwell], [DefaultApprovals] (one: the documented setup for an
// external call), practice requests at [DefaultPractice] and active
// confirmation.
func AllControls() Controls {
	return Controls{Flood: true, Targets: true, FirstContactApprovals: DefaultFirstContactApprovals,
		Dwell: DefaultDwell, Approvals: DefaultApprovals, Practice: DefaultPractice, Confirm: true}
}

// Without returns c with one control off, by the name Ablation uses:
// "flood", "targets", "first-contact approver", "dwell", "rule of k",
// "practice" or "confirm". An unknown name changes nothing.
func Without(c Controls, name string) Controls {
	switch name {
	case "flood":
		c.Flood, c.Targets = false, false
	case "targets":
		c.Targets = false
	case "first-contact approver":
		c.FirstContactApprovals = 0
	case "dwell":
		c.Dwell = 0
	case "rule of k":
		c.Approvals = 1
	case "practice":
		c.Practice = 0
	case "confirm":
		c.Confirm = false
	}
	return c
}

// firstContactApprovals is the approvers a first contact needs, when
// the first-contact rule is on and asks for more than Approvals.
func (c Controls) firstContactApprovals() int {
	if c.Flood && c.Targets && c.FirstContactApprovals > c.Approvals {
		return c.FirstContactApprovals
	}
	return c.Approvals
}

// names names the controls c turns on, in the names [Without] takes.
func (c Controls) names() []string {
	var ns []string
	if c.Flood {
		ns = append(ns, "flood")
		if c.Targets {
			ns = append(ns, "targets")
			if c.FirstContactApprovals > c.Approvals {
				ns = append(ns, "first-contact approver")
			}
		}
	}
	if c.Dwell > 0 {
		ns = append(ns, "dwell")
	}
	if c.Approvals > 1 {
		ns = append(ns, "rule of k")
	}
	if c.Practice > 0 {
		ns = append(ns, "practice")
	}
	if c.Confirm {
		ns = append(ns, "confirm")
	}
	return ns
}

// Named is a configuration with a name for a table.
type Named struct {
	Name     string   `json:"name"`
	Controls Controls `json:"controls"`
}

// Ablation returns the naive queue, on with each of its controls off in
// turn ("all on but ..."), and on itself, so an operator sees what each
// control buys and costs given the others: a control the others already
// cover buys little. A control that on leaves off has no row.
func Ablation(on Controls) []Named {
	rows := []Named{{"off (naive queue)", NaiveQueue()}}
	for _, n := range on.names() {
		label := n
		if n == "rule of k" {
			label = fmt.Sprintf("rule of %d", on.Approvals)
		}
		rows = append(rows, Named{"all on but " + label, Without(on, n)})
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
	case !(s.BenignFirstContact >= 0 && s.BenignFirstContact <= 1):
		return fmt.Errorf("%w: benign first contact must be in [0, 1], got %v", ErrInvalid, s.BenignFirstContact)
	case s.KnownTargets < 0 || s.KnownTargets > MaxUsers:
		return fmt.Errorf("%w: known targets must be between 0 (one) and %d, got %d", ErrInvalid, MaxUsers, s.KnownTargets)
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
	case a.Targets < 0 || a.Targets > MaxUsers:
		return fmt.Errorf("%w: attack targets must be between 0 (one) and %d, got %d", ErrInvalid, MaxUsers, a.Targets)
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
	case c.FirstContactApprovals < 0 || c.FirstContactApprovals > MaxApprovals:
		return fmt.Errorf("%w: first-contact approvals must be between 0 and %d, got %d", ErrInvalid, MaxApprovals, c.FirstContactApprovals)
	case !(c.Practice >= 0 && c.Practice <= MaxPractice):
		return fmt.Errorf("%w: practice must be in [0, %g], got %v", ErrInvalid, MaxPractice, c.Practice)
	}
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
