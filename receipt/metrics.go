package receipt

import (
	"slices"
	"time"
)

// ApprovalMetrics are the approval figures to watch for approval
// fatigue, overall and per effect class. An approval rate near 1 with a
// median decision of a few seconds means nobody is reading.
type ApprovalMetrics struct {
	Overall ClassMetrics            `json:"overall"`
	ByClass map[string]ClassMetrics `json:"by_class"` // keyed by AuditRecord.EffectClass
}

// ClassMetrics are the approval figures of one effect class (or of all).
type ClassMetrics struct {
	// Requests counts calls parked for an approver (needs_approval).
	Requests int `json:"requests"`
	// Approved and Denied count approvers' decisions; Expired counts
	// tickets that expired or were cancelled without one.
	Approved int `json:"approved"`
	Denied   int `json:"denied"`
	Expired  int `json:"expired"`
	// ApprovalRate is Approved / (Approved + Denied): of the requests a
	// person decided, the share approved. Zero when none was decided.
	ApprovalRate float64 `json:"approval_rate"`
	// MedianDecision is the median time from request to an approver's
	// decision (AuditRecord.DecisionMillis of approved and denied rows).
	MedianDecision time.Duration `json:"median_decision_ns"`
	// Reviewers counts distinct approvers who approved.
	Reviewers int `json:"reviewers"`
	// ApprovalsPerReviewerHour is approvals divided by the reviewers'
	// active hours, each reviewer's active time being the span from their
	// first to their last approval, at least one hour.
	ApprovalsPerReviewerHour float64 `json:"approvals_per_reviewer_hour"`
	// PeakReviewerHour is the most approvals one reviewer gave within any
	// 60 minutes.
	PeakReviewerHour int `json:"peak_reviewer_hour"`
}

// Metrics computes the approval figures of records, overall and per effect
// class. The records need not be sorted or form a whole chain; times are
// the records' own. The gateway's audit export and the verify CLI both
// use it.
func Metrics(records []AuditRecord) ApprovalMetrics {
	all := &tally{}
	classes := map[string]*tally{}
	for i := range records {
		r := &records[i]
		c := classes[r.EffectClass]
		if c == nil {
			c = &tally{}
			classes[r.EffectClass] = c
		}
		all.add(r)
		c.add(r)
	}
	m := ApprovalMetrics{Overall: all.metrics(), ByClass: make(map[string]ClassMetrics, len(classes))}
	for name, t := range classes {
		m.ByClass[name] = t.metrics()
	}
	return m
}

// tally accumulates one class's records.
type tally struct {
	m         ClassMetrics
	decisions []int64            // DecisionMillis of approved and denied
	approvals map[string][]int64 // approver -> times (Unix ms) of approvals
}

func (t *tally) add(r *AuditRecord) {
	switch r.Decision {
	case DecisionNeedsApproval:
		t.m.Requests++
	case DecisionApproved:
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

func (t *tally) metrics() ClassMetrics {
	m := t.m
	if n := m.Approved + m.Denied; n > 0 {
		m.ApprovalRate = float64(m.Approved) / float64(n)
	}
	m.MedianDecision = time.Duration(median(t.decisions) * float64(time.Millisecond))
	const hourMillis = int64(time.Hour / time.Millisecond)
	var activeHours float64
	for _, times := range t.approvals {
		slices.Sort(times)
		span := max(times[len(times)-1]-times[0], hourMillis)
		activeHours += float64(span) / float64(hourMillis)
		// Sliding 60-minute window over this reviewer's approvals.
		lo := 0
		for hi := range times {
			for times[hi]-times[lo] >= hourMillis {
				lo++
			}
			m.PeakReviewerHour = max(m.PeakReviewerHour, hi-lo+1)
		}
	}
	m.Reviewers = len(t.approvals)
	if activeHours > 0 {
		m.ApprovalsPerReviewerHour = float64(m.Approved) / activeHours
	}
	return m
}

// median returns the median of v (the mean of the middle two for an even
// count), or 0 for none. It sorts v.
func median(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return float64(v[n/2])
	}
	return (float64(v[n/2-1]) + float64(v[n/2])) / 2
}
