// Package figures computes the approval figures an operator watches for
// approval fatigue from audit records: per effect class, per approver and
// overall, how many calls were put to a person, how people decided, how
// long they took, and how fast approvals followed one another over the
// time people were actually approving.
//
// # What each figure counts
//
// Every column counts one kind of audit row, and says which:
//
//   - Asked: calls parked for a person (needs_approval rows). Only a
//     class (and the overall row) has it: a call is put to a group, not
//     to one approver.
//   - Approvals and Denials: decisions people made (approved and cosigned
//     rows; denied rows). A ticket that needs two people has two approval
//     rows, so a class's Approvals may exceed its Asked.
//   - WrongPicks: approvals refused because the approver picked a
//     look-alike of the effect's key value (misconfirmed rows; see
//     gate.WithConfirmation). They are not decisions.
//   - Lapsed: tickets that expired or were cancelled before enough people
//     decided (expired and cancelled rows).
//
// A figure that has nothing to measure is nil, never zero: with no
// decisions the approval rate and the decision times are nil ("no
// decisions yet"), with no measured active time the approval pace is nil.
//
// # Active time
//
// A reviewer's active time is the span from their first to their last
// approval in the records, as measured: never rounded up. Their pace is
// the approvals after their first, per hour of that span, so 27
// approvals two minutes apart in all read as 13 a minute, not 27 an hour.
//
// # JSON
//
// A [Report] marshals to a stable shape for dashboards: the field names
// are the json tags of [Report], [Class], [Approver], [Decisions],
// [DecisionTime], [Pace], [Window] and [Peak], durations are in
// milliseconds (fields ending in _ms), times are Unix milliseconds, and
// a figure with nothing to measure is null.
package figures

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/agentstepup/asu/audit"
)

// Report are the approval figures of a set of audit records: overall,
// per effect class and per approver, the window they span, the busiest
// hour, and the rubber-stamp rule they were judged by.
type Report struct {
	// Window is the span of the records' times; nil when there were none.
	Window *Window `json:"window"`
	// Overall counts every record.
	Overall Class `json:"overall"`
	// ByClass holds the figures of each effect class, keyed by
	// [audit.Record].EffectClass.
	ByClass map[string]Class `json:"by_class"`
	// ByApprover holds each person's own decisions, keyed by
	// [audit.Record].Approver. Rows without an approver are left out.
	ByApprover map[string]Approver `json:"by_approver"`
	// PeakHour is the 60 minutes in which people, all together, gave the
	// most approvals; nil when there was no approval.
	PeakHour *Peak `json:"peak_hour"`
	// Rule is the rubber-stamp rule the figures were judged by.
	Rule RubberStampRule `json:"rubber_stamp_rule"`
	// Warnings say, one line each, which figures tripped Rule: overall
	// first, then classes and approvers in name order. Empty when none did.
	Warnings []string `json:"warnings"`
}

// Window is the span of the records a [Report] was computed from.
type Window struct {
	From    int64 `json:"from"`    // Unix milliseconds of the earliest record
	To      int64 `json:"to"`      // Unix milliseconds of the latest record
	Records int   `json:"records"` // how many records the figures read
}

// Peak is the busiest 60 minutes: the hour starting at Start (Unix
// milliseconds, the time of an approval) held Approvals approvals, the
// most of any hour.
type Peak struct {
	Start     int64 `json:"start"`
	Approvals int   `json:"approvals"`
}

// Decisions are the figures of the decisions people made.
type Decisions struct {
	// Approvals counts approving decisions (approved and cosigned rows:
	// each person of a quorum counts).
	Approvals int `json:"approvals"`
	// Denials counts denying decisions (denied rows).
	Denials int `json:"denials"`
	// WrongPicks counts approvals refused because a look-alike of the
	// effect's key value was picked (misconfirmed rows): not decisions,
	// so not in Decided or ApprovalRate.
	WrongPicks int `json:"wrong_picks"`
	// ApprovalRate is Approvals / (Approvals + Denials); nil when there
	// was no decision.
	ApprovalRate *float64 `json:"approval_rate"`
	// Time is how long the decisions took from the request; nil when
	// there was no decision.
	Time *DecisionTime `json:"decision_time"`
	// RubberStamp reports that these decisions trip the rule the figures
	// were computed with ([Report].Rule).
	RubberStamp bool `json:"rubber_stamp"`
	// Catch is how often practice requests (gate.WithPractice) were
	// caught; nil when none was decided.
	Catch *CatchRate `json:"catch"`
}

// Decided is Approvals + Denials: the decisions people made.
func (d Decisions) Decided() int { return d.Approvals + d.Denials }

// DecisionTime is the spread of the time from request to decision
// ([audit.Record].DecisionMillis of approved, cosigned and denied rows).
type DecisionTime struct {
	// MedianMillis is the median (the mean of the middle two for an even
	// count).
	MedianMillis float64 `json:"median_ms"`
	// P90Millis is the 90th percentile by nearest rank: the shortest time
	// within which at least 90% of the decisions were made.
	P90Millis int64 `json:"p90_ms"`
}

// Median is MedianMillis as a Duration, saturated at Duration's limits.
func (t DecisionTime) Median() time.Duration { return millis(t.MedianMillis) }

// P90 is P90Millis as a Duration, saturated at Duration's limits.
func (t DecisionTime) P90() time.Duration { return millis(float64(t.P90Millis)) }

// Pace is how fast approvals followed one another while people were
// approving.
type Pace struct {
	// ActiveMillis is the active time as measured: for each person, the
	// span from their first to their last approval, summed.
	ActiveMillis int64 `json:"active_ms"`
	// ApprovalsPerActiveHour is the approvals after each person's first,
	// per hour of ActiveMillis; nil when ActiveMillis is zero (nobody
	// approved twice at different times).
	ApprovalsPerActiveHour *float64 `json:"approvals_per_active_hour"`
	// PeakHour is the most approvals one person gave within any 60
	// minutes.
	PeakHour int `json:"peak_hour"`
}

// Class are the figures of one effect class, or of all records.
type Class struct {
	// Asked counts calls parked for a person (needs_approval rows).
	Asked int `json:"asked"`
	Decisions
	// Lapsed counts tickets that expired or were cancelled before enough
	// people decided (expired and cancelled rows).
	Lapsed int `json:"lapsed"`
	// Reviewers counts the distinct people who approved.
	Reviewers int `json:"reviewers"`
	Pace
}

// Approver are one person's own figures: their decisions and their pace.
// Calls are put to a group, so a person has no Asked or Lapsed.
type Approver struct {
	Decisions
	Pace
	// CatchByClass is the approver's catch rate of practice requests in
	// each effect class they decided one of, keyed like [Report].ByClass:
	// an approver who catches look-alike recipients on external calls and
	// misses them on irreversible ones is told apart from one who catches
	// both. Empty when they decided none.
	CatchByClass map[string]CatchRate `json:"catch_by_class"`
}

// The default rubber-stamp thresholds ([DefaultRubberStampRule]).
const (
	// DefaultRubberStampRate is the approval rate above which approving
	// is suspect: more than 95% approved. A class approved 99.7% of the
	// time with 3-second decisions is the textbook case of a control that
	// exists on paper only.
	DefaultRubberStampRate = 0.95
	// DefaultRubberStampMedian is the median decision time below which
	// nobody can have read the card: 5 seconds. Reading the tool, the
	// recipient, the amount and the provenance, then deciding, takes
	// longer.
	DefaultRubberStampMedian = 5 * time.Second
	// DefaultRubberStampMinDecisions is how many decisions the rule needs
	// before it judges: 20. Below that one denial moves the rate by more
	// than 5 points, so a couple of quick approvals say nothing yet.
	DefaultRubberStampMinDecisions = 20
)

// RubberStampRule says when approval figures mean people approve without
// reading: at least MinDecisions decisions, an approval rate strictly
// above Rate, and a median decision strictly shorter than Median. All
// three must hold, so a careful reviewer who approves nearly everything
// (rate alone) or decides quickly but denies often (speed alone) does not
// trip it.
type RubberStampRule struct {
	Rate         float64       `json:"rate_above"`
	Median       time.Duration `json:"median_below_ns"`
	MinDecisions int           `json:"min_decisions"`
	// CatchFloor is the least catch rate of practice requests an approver
	// should keep: a warning names an approver whose rate's whole 95%
	// interval lies below it. Zero warns of nobody.
	CatchFloor float64 `json:"catch_floor"`
}

// DefaultCatchFloor is the catch floor [DefaultRubberStampRule] keeps:
// half the practice requests. An approver who, as far as the figures can
// tell, lets most attacks through is told apart from one who was unlucky
// with a few.
const DefaultCatchFloor = 0.5

// CatchRate is how often the practice requests put to someone were caught
// (denied) rather than missed (approved), with the Wilson score interval
// at 95%, which holds for small counts where the plain rate does not.
type CatchRate struct {
	Caught int     `json:"caught"`
	Missed int     `json:"missed"`
	Rate   float64 `json:"rate"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
}

// catchRate is the catch rate of caught and missed; nil when both are 0.
func catchRate(caught, missed int) *CatchRate {
	n := float64(caught + missed)
	if n == 0 {
		return nil
	}
	const z = 1.959963984540054 // the 97.5th percentile of the normal law
	p := float64(caught) / n
	centre := (p + z*z/(2*n)) / (1 + z*z/n)
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / (1 + z*z/n)
	return &CatchRate{Caught: caught, Missed: missed, Rate: p,
		Low: math.Max(0, centre-half), High: math.Min(1, centre+half)}
}

// DefaultRubberStampRule returns the rule [Compute] applies: a rate over
// [DefaultRubberStampRate] with a median under [DefaultRubberStampMedian],
// over at least [DefaultRubberStampMinDecisions] decisions.
func DefaultRubberStampRule() RubberStampRule {
	return RubberStampRule{Rate: DefaultRubberStampRate, Median: DefaultRubberStampMedian,
		MinDecisions: DefaultRubberStampMinDecisions, CatchFloor: DefaultCatchFloor}
}

// Trips reports whether d meets every condition of r. A MinDecisions
// below 1 counts as 1, so figures without decisions never trip; a NaN
// Rate never trips.
func (r RubberStampRule) Trips(d Decisions) bool {
	if d.ApprovalRate == nil || d.Time == nil {
		return false
	}
	return d.Decided() >= max(r.MinDecisions, 1) && *d.ApprovalRate > r.Rate && d.Time.Median() < r.Median
}

// warning is the line that says figures of scope tripped r.
func (r RubberStampRule) warning(scope string, d Decisions) string {
	return fmt.Sprintf("%s: %.1f%% approved over %d decisions, median decision %s: approvals look rubber-stamped (rule: over %.1f%% approved, median under %s, at least %d decisions)",
		scope, 100**d.ApprovalRate, d.Decided(), d.Time.Median().Round(time.Millisecond),
		100*r.Rate, r.Median, max(r.MinDecisions, 1))
}

// Compute returns the approval figures of records, judged by
// [DefaultRubberStampRule]. The records need not be sorted or form a
// whole chain; times are the records' own. The gateway's figures page,
// the gate's admin metrics and the verify CLI use it.
func Compute(records []audit.Record) Report {
	return ComputeWithRule(records, DefaultRubberStampRule())
}

// ComputeWithRule is [Compute] judged by rule instead of the default.
func ComputeWithRule(records []audit.Record, rule RubberStampRule) Report {
	var t Tally
	for i := range records {
		t.Add(&records[i])
	}
	return t.Report(rule)
}

// Tally accumulates records one at a time, for a reader that streams a
// chain rather than holding it ([audit.Verifier]). It keeps 8 bytes per
// decision and per approval, not the records. The zero Tally is empty and
// ready to use; it is not safe for concurrent use.
type Tally struct {
	window    *Window
	all       tally
	classes   map[string]*tally
	approvers map[string]*tally
}

// Add counts r.
func (t *Tally) Add(r *audit.Record) {
	if t.window == nil {
		t.window = &Window{From: r.Time, To: r.Time}
	}
	t.window.From, t.window.To = min(t.window.From, r.Time), max(t.window.To, r.Time)
	t.window.Records++
	t.all.add(r)
	if t.classes == nil {
		t.classes, t.approvers = map[string]*tally{}, map[string]*tally{}
	}
	c := t.classes[r.EffectClass]
	if c == nil {
		c = &tally{}
		t.classes[r.EffectClass] = c
	}
	c.add(r)
	if r.Approver != "" && (decision(r.Decision) || r.Decision == audit.DecisionMisconfirmed || practice(r.Decision)) {
		a := t.approvers[r.Approver]
		if a == nil {
			a = &tally{}
			t.approvers[r.Approver] = a
		}
		a.add(r)
	}
}

// Report returns the figures of the records added so far, judged by rule.
// The Tally may go on counting afterwards.
func (t *Tally) Report(rule RubberStampRule) Report {
	m := Report{
		Overall:    t.all.class(rule),
		ByClass:    make(map[string]Class, len(t.classes)),
		ByApprover: make(map[string]Approver, len(t.approvers)),
		Rule:       rule,
		Warnings:   []string{},
	}
	if t.window != nil {
		w := *t.window
		m.Window = &w
	}
	m.PeakHour = t.all.peakHour()
	if m.Overall.RubberStamp {
		m.Warnings = append(m.Warnings, rule.warning("all", m.Overall.Decisions))
	}
	for _, name := range sortedKeys(t.classes) {
		c := t.classes[name].class(rule)
		m.ByClass[name] = c
		if c.RubberStamp {
			m.Warnings = append(m.Warnings, rule.warning(fmt.Sprintf("class %q", name), c.Decisions))
		}
	}
	for _, name := range sortedKeys(t.approvers) {
		at := t.approvers[name]
		a := at.class(rule)
		m.ByApprover[name] = Approver{Decisions: a.Decisions, Pace: a.Pace, CatchByClass: at.catchByClass()}
		if a.RubberStamp {
			m.Warnings = append(m.Warnings, rule.warning(fmt.Sprintf("approver %q", name), a.Decisions))
		}
		if c := a.Catch; c != nil && c.High < rule.CatchFloor {
			m.Warnings = append(m.Warnings, fmt.Sprintf("approver %q: caught %d of %d practice requests (%.0f%%, 95%% interval %.0f%% to %.0f%%), below the floor of %.0f%%",
				name, c.Caught, c.Caught+c.Missed, 100*c.Rate, 100*c.Low, 100*c.High, 100*rule.CatchFloor))
		}
	}
	return m
}

// practice reports whether a row records a decision on a practice request.
func practice(d string) bool {
	return d == audit.DecisionPracticeCaught || d == audit.DecisionPracticeMissed
}

// decision reports whether a row records a person's decision.
func decision(d string) bool {
	return d == audit.DecisionApproved || d == audit.DecisionCosigned || d == audit.DecisionDenied
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// tally accumulates the records of one class, one approver, or all.
type tally struct {
	asked, approvals, denials, lapsed int
	wrongPicks, caught, missed        int
	decisions                         []int64            // DecisionMillis of every decision
	approved                          map[string][]int64 // approver -> times (Unix ms) of their approvals
	practised                         map[string]*[2]int // effect class -> caught, missed
}

// practise counts a practice request of class caught or missed.
func (t *tally) practise(class string, missed bool) {
	if t.practised == nil {
		t.practised = map[string]*[2]int{}
	}
	n := t.practised[class]
	if n == nil {
		n = new([2]int)
		t.practised[class] = n
	}
	if missed {
		n[1]++
	} else {
		n[0]++
	}
}

// catchByClass is the catch rate of each class a practice request of
// was decided in.
func (t *tally) catchByClass() map[string]CatchRate {
	m := make(map[string]CatchRate, len(t.practised))
	for class, n := range t.practised {
		m[class] = *catchRate(n[0], n[1])
	}
	return m
}

func (t *tally) add(r *audit.Record) {
	switch r.Decision {
	case audit.DecisionNeedsApproval:
		t.asked++
	case audit.DecisionApproved, audit.DecisionCosigned: // each approver of a quorum decided
		t.approvals++
		t.decisions = append(t.decisions, r.DecisionMillis)
		if t.approved == nil {
			t.approved = map[string][]int64{}
		}
		t.approved[r.Approver] = append(t.approved[r.Approver], r.Time)
	case audit.DecisionDenied:
		t.denials++
		t.decisions = append(t.decisions, r.DecisionMillis)
	case audit.DecisionExpired, audit.DecisionCancelled:
		t.lapsed++
	case audit.DecisionMisconfirmed:
		t.wrongPicks++
	case audit.DecisionPracticeCaught:
		t.caught++
		t.practise(r.EffectClass, false)
	case audit.DecisionPracticeMissed:
		t.missed++
		t.practise(r.EffectClass, true)
	}
}

const hourMillis = int64(time.Hour / time.Millisecond)

func (t *tally) class(rule RubberStampRule) Class {
	c := Class{Asked: t.asked, Lapsed: t.lapsed, Reviewers: len(t.approved),
		Decisions: Decisions{Approvals: t.approvals, Denials: t.denials, WrongPicks: t.wrongPicks,
			Catch: catchRate(t.caught, t.missed)}}
	if n := c.Decided(); n > 0 {
		rate := float64(c.Approvals) / float64(n)
		c.ApprovalRate = &rate
		slices.Sort(t.decisions)
		c.Time = &DecisionTime{MedianMillis: median(t.decisions), P90Millis: p90(t.decisions)}
	}
	var active uint64
	gaps := 0
	// Approvers in name order, so the figures are the same on every run.
	for _, name := range sortedKeys(t.approved) {
		times := t.approved[name]
		slices.Sort(times)
		active = saturatingAdd(active, elapsed(times[0], times[len(times)-1]))
		gaps += len(times) - 1
		c.PeakHour = max(c.PeakHour, peak(times).Approvals)
	}
	c.ActiveMillis = int64(min(active, math.MaxInt64))
	if active > 0 {
		perHour := float64(gaps) / (float64(active) / float64(hourMillis))
		c.ApprovalsPerActiveHour = &perHour
	}
	c.RubberStamp = rule.Trips(c.Decisions)
	return c
}

// peakHour is the busiest hour of all approvals, whoever gave them.
func (t *tally) peakHour() *Peak {
	if t.approvals == 0 {
		return nil
	}
	var times []int64
	for _, v := range t.approved {
		times = append(times, v...)
	}
	slices.Sort(times)
	p := peak(times)
	return &p
}

// peak slides a 60-minute window over sorted times: lo moves past every
// time an hour or more before times[hi]. The earliest busiest hour wins.
func peak(times []int64) Peak {
	var p Peak
	lo := 0
	for hi := range times {
		for elapsed(times[lo], times[hi]) >= uint64(hourMillis) {
			lo++
		}
		if n := hi - lo + 1; n > p.Approvals {
			p = Peak{Start: times[lo], Approvals: n}
		}
	}
	return p
}

// elapsed returns to - from for from <= to, exactly: the difference of
// two int64s always fits in a uint64, even for a forged record's times.
func elapsed(from, to int64) uint64 { return uint64(to) - uint64(from) }

func saturatingAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// millis converts milliseconds to a Duration, saturating at the limits
// of Duration rather than overflowing on a forged record's times.
func millis(ms float64) time.Duration {
	ns := ms * float64(time.Millisecond)
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}

// median returns the median of sorted, non-empty v (the mean of the
// middle two for an even count).
func median(v []int64) float64 {
	n := len(v)
	if n%2 == 1 {
		return float64(v[n/2])
	}
	return (float64(v[n/2-1]) + float64(v[n/2])) / 2
}

// p90 returns the 90th percentile of sorted, non-empty v by nearest rank
// (the ceil(0.9 n)-th smallest).
func p90(v []int64) int64 { return v[(9*len(v)+9)/10-1] }
