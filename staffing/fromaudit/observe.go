package fromaudit

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/staffing"
)

// ErrNoRecords is returned by [Observe] for no records.
var ErrNoRecords = errors.New("fromaudit: no audit records to observe")

// Observe reads the figures of a [staffing.Load] from audit records,
// which need not be sorted, verified or form a whole chain. Its time grows
// linearly with len(records), plus the sorting of request and decision
// times. It fails only for no records.
func Observe(records []audit.Record) (staffing.Observed, error) {
	if len(records) == 0 {
		return staffing.Observed{}, ErrNoRecords
	}
	o := staffing.Observed{Records: len(records)}
	first, last := records[0].Time, records[0].Time
	tasks := map[string]bool{} // task -> asked for an approval
	var requests, decisions []int64
	for i := range records {
		r := &records[i]
		first, last = min(first, r.Time), max(last, r.Time)
		asked := r.Decision == audit.DecisionNeedsApproval
		tasks[r.Task] = tasks[r.Task] || asked
		switch {
		case asked:
			requests = append(requests, r.Time)
		case r.Decision == audit.DecisionApproved || r.Decision == audit.DecisionDenied:
			decisions = append(decisions, r.DecisionMillis)
		}
	}
	o.From, o.To = first, last
	const hourMillis = float64(time.Hour / time.Millisecond)
	hoursSpan := max(float64(elapsed(first, last))/hourMillis, 1)
	o.Days = hoursSpan / 24
	o.Tasks = len(tasks)
	for _, asked := range tasks {
		if asked {
			o.TasksWithApproval++
		}
	}
	o.Requests, o.Decisions = len(requests), len(decisions)
	o.PeakHourRequests = peakHour(requests)
	o.MedianDecision = medianMillis(decisions)

	o.TasksPerDay = float64(o.Tasks) / o.Days
	o.ApprovalShare = float64(o.TasksWithApproval) / float64(o.Tasks)
	o.ApprovalsPerDay = float64(o.Requests) / o.Days
	if o.Requests > 0 {
		o.ApprovalsPerTask = float64(o.Requests) / float64(o.TasksWithApproval)
		o.PeakFactor = max(float64(o.PeakHourRequests)/(float64(o.Requests)/hoursSpan), 1)
	}
	return o, nil
}

// peakHour returns the most of times within any 60 minutes. It sorts
// times.
func peakHour(times []int64) int {
	slices.Sort(times)
	peak, lo := 0, 0
	for hi := range times {
		for elapsed(times[lo], times[hi]) >= uint64(time.Hour/time.Millisecond) {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}

// medianMillis returns the median of ms, in milliseconds, as a Duration
// (saturated at its limits), or 0 for none. It sorts ms.
func medianMillis(ms []int64) time.Duration {
	n := len(ms)
	if n == 0 {
		return 0
	}
	slices.Sort(ms)
	m := float64(ms[n/2])
	if n%2 == 0 {
		m = (float64(ms[n/2-1]) + m) / 2
	}
	ns := m * float64(time.Millisecond)
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}

// elapsed returns to - from for from <= to, exactly: the difference of
// two int64s always fits in a uint64, even for a forged record's times.
func elapsed(from, to int64) uint64 { return uint64(to) - uint64(from) }
