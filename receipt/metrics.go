package receipt

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// ApprovalMetrics are the approval figures to watch for approval
// fatigue: overall, per effect class and per approver. An approval rate
// near 1 with a median decision of a few seconds means nobody is reading;
// [RubberStampRule] says when the figures are taken to mean that.
type ApprovalMetrics struct {
	Overall ClassMetrics            `json:"overall"`
	ByClass map[string]ClassMetrics `json:"by_class"` // keyed by AuditRecord.EffectClass
	// ByApprover holds each approver's own decisions, keyed by
	// AuditRecord.Approver. Only approved and denied rows name a person,
	// so Requests and Expired are zero here; rows without an approver are
	// left out.
	ByApprover map[string]ClassMetrics `json:"by_approver"`
	// Rule is the rubber-stamp rule the figures were judged by.
	Rule RubberStampRule `json:"rubber_stamp_rule"`
	// Warnings say, one line each, which figures tripped Rule: overall
	// first, then classes and approvers in name order. Empty when none did.
	Warnings []string `json:"warnings"`
}

// ClassMetrics are the approval figures of one effect class, one approver,
// or all records.
type ClassMetrics struct {
	// Requests counts calls parked for an approver (needs_approval).
	Requests int `json:"requests"`
	// Approved and Denied count approvers' decisions (each approval of a
	// ticket that needs several people counts: "cosigned" rows and the
	// last "approved"); Expired counts tickets that expired or were
	// cancelled without one.
	Approved int `json:"approved"`
	Denied   int `json:"denied"`
	Expired  int `json:"expired"`
	// ApprovalRate is Approved / (Approved + Denied): of the requests a
	// person decided, the share approved. Zero when none was decided.
	ApprovalRate float64 `json:"approval_rate"`
	// MedianDecision is the median time from request to an approver's
	// decision (AuditRecord.DecisionMillis of approved and denied rows;
	// the mean of the middle two for an even count).
	MedianDecision time.Duration `json:"median_decision_ns"`
	// P90Decision is the 90th percentile of the same times, by nearest
	// rank: the shortest time within which at least 90% of the decisions
	// were made. The median says whether people read; P90 says how long
	// the slow tail waits.
	P90Decision time.Duration `json:"p90_decision_ns"`
	// Reviewers counts distinct approvers who approved.
	Reviewers int `json:"reviewers"`
	// ApprovalsPerReviewerHour is approvals divided by the reviewers'
	// active hours, each reviewer's active time being the span from their
	// first to their last approval, at least one hour.
	ApprovalsPerReviewerHour float64 `json:"approvals_per_reviewer_hour"`
	// PeakReviewerHour is the most approvals one reviewer gave within any
	// 60 minutes.
	PeakReviewerHour int `json:"peak_reviewer_hour"`
	// RubberStamp reports that these figures trip the rubber-stamp rule
	// the metrics were computed with ([ApprovalMetrics].Rule).
	RubberStamp bool `json:"rubber_stamp"`
}

// Decisions is Approved + Denied: the requests a person decided.
func (c ClassMetrics) Decisions() int { return c.Approved + c.Denied }

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
}

// DefaultRubberStampRule returns the rule [Metrics] applies: a rate over
// [DefaultRubberStampRate] with a median under [DefaultRubberStampMedian],
// over at least [DefaultRubberStampMinDecisions] decisions.
func DefaultRubberStampRule() RubberStampRule {
	return RubberStampRule{Rate: DefaultRubberStampRate, Median: DefaultRubberStampMedian,
		MinDecisions: DefaultRubberStampMinDecisions}
}

// Trips reports whether c meets every condition of r. A MinDecisions
// below 1 counts as 1, so figures without decisions never trip; a NaN Rate
// never trips.
func (r RubberStampRule) Trips(c ClassMetrics) bool {
	n := c.Decisions()
	return n >= max(r.MinDecisions, 1) && c.ApprovalRate > r.Rate && c.MedianDecision < r.Median
}

// warning is the line that says figures of scope tripped r.
func (r RubberStampRule) warning(scope string, c ClassMetrics) string {
	return fmt.Sprintf("%s: %.1f%% approved over %d decisions, median decision %s: approvals look rubber-stamped (rule: over %.1f%% approved, median under %s, at least %d decisions)",
		scope, 100*c.ApprovalRate, c.Decisions(), c.MedianDecision.Round(time.Millisecond),
		100*r.Rate, r.Median, max(r.MinDecisions, 1))
}

// Metrics computes the approval figures of records, overall, per effect
// class and per approver, and judges them by [DefaultRubberStampRule].
// The records need not be sorted or form a whole chain; times are the
// records' own. The gateway's audit export and the verify CLI both use it.
func Metrics(records []AuditRecord) ApprovalMetrics {
	return MetricsWithRule(records, DefaultRubberStampRule())
}

// MetricsWithRule is [Metrics] judged by rule instead of the default. Its
// time grows linearly with len(records), plus the sorting of decision and
// approval times.
func MetricsWithRule(records []AuditRecord, rule RubberStampRule) ApprovalMetrics {
	all := &tally{}
	classes := map[string]*tally{}
	approvers := map[string]*tally{}
	for i := range records {
		r := &records[i]
		all.add(r)
		c := classes[r.EffectClass]
		if c == nil {
			c = &tally{}
			classes[r.EffectClass] = c
		}
		c.add(r)
		if r.Approver != "" && (r.Decision == DecisionApproved || r.Decision == DecisionCosigned || r.Decision == DecisionDenied) {
			a := approvers[r.Approver]
			if a == nil {
				a = &tally{}
				approvers[r.Approver] = a
			}
			a.add(r)
		}
	}
	m := ApprovalMetrics{
		Overall:    all.metrics(rule),
		ByClass:    make(map[string]ClassMetrics, len(classes)),
		ByApprover: make(map[string]ClassMetrics, len(approvers)),
		Rule:       rule,
		Warnings:   []string{},
	}
	if m.Overall.RubberStamp {
		m.Warnings = append(m.Warnings, rule.warning("all", m.Overall))
	}
	for _, name := range sortedKeys(classes) {
		c := classes[name].metrics(rule)
		m.ByClass[name] = c
		if c.RubberStamp {
			m.Warnings = append(m.Warnings, rule.warning(fmt.Sprintf("class %q", name), c))
		}
	}
	for _, name := range sortedKeys(approvers) {
		c := approvers[name].metrics(rule)
		m.ByApprover[name] = c
		if c.RubberStamp {
			m.Warnings = append(m.Warnings, rule.warning(fmt.Sprintf("approver %q", name), c))
		}
	}
	return m
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
	m         ClassMetrics
	decisions []int64            // DecisionMillis of approved and denied
	approvals map[string][]int64 // approver -> times (Unix ms) of approvals
}

func (t *tally) add(r *AuditRecord) {
	switch r.Decision {
	case DecisionNeedsApproval:
		t.m.Requests++
	case DecisionApproved, DecisionCosigned: // each approver of a quorum decided
		t.m.Approved++
		t.decisions = append(t.decisions, r.DecisionMillis)
		if t.approvals == nil {
			t.approvals = map[string][]int64{}
		}
		t.approvals[r.Approver] = append(t.approvals[r.Approver], r.Time)
	case DecisionDenied:
		t.m.Denied++
		t.decisions = append(t.decisions, r.DecisionMillis)
	case DecisionExpired, DecisionCancelled:
		t.m.Expired++
	}
}

const hourMillis = int64(time.Hour / time.Millisecond)

func (t *tally) metrics(rule RubberStampRule) ClassMetrics {
	m := t.m
	if n := m.Decisions(); n > 0 {
		m.ApprovalRate = float64(m.Approved) / float64(n)
	}
	slices.Sort(t.decisions)
	m.MedianDecision = millis(median(t.decisions))
	m.P90Decision = millis(p90(t.decisions))
	var activeHours float64
	// Approvers in name order, so the float sum, and so the figures, are
	// the same on every run.
	for _, name := range sortedKeys(t.approvals) {
		times := t.approvals[name]
		slices.Sort(times)
		span := max(elapsed(times[0], times[len(times)-1]), uint64(hourMillis))
		activeHours += float64(span) / float64(hourMillis)
		// Sliding 60-minute window over this reviewer's approvals: lo
		// moves past every approval an hour or more before times[hi].
		lo := 0
		for hi := range times {
			for elapsed(times[lo], times[hi]) >= uint64(hourMillis) {
				lo++
			}
			m.PeakReviewerHour = max(m.PeakReviewerHour, hi-lo+1)
		}
	}
	m.Reviewers = len(t.approvals)
	if activeHours > 0 {
		m.ApprovalsPerReviewerHour = float64(m.Approved) / activeHours
	}
	m.RubberStamp = rule.Trips(m)
	return m
}

// elapsed returns to - from for from <= to, exactly: the difference of
// two int64s always fits in a uint64, even for a forged record's times.
func elapsed(from, to int64) uint64 { return uint64(to) - uint64(from) }

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

// median returns the median of sorted v (the mean of the middle two for an
// even count), or 0 for none.
func median(v []int64) float64 {
	n := len(v)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return float64(v[n/2])
	}
	return (float64(v[n/2-1]) + float64(v[n/2])) / 2
}

// p90 returns the 90th percentile of sorted v by nearest rank (the
// ceil(0.9 n)-th smallest), or 0 for none.
func p90(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	return float64(v[(9*len(v)+9)/10-1])
}
