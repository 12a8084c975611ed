package staffing

import "math"

// Plan is what a [Load] asks of people: the approvals it makes, the
// reviewers it keeps busy at the peak, the reviewers to have on shift, and
// the tickets parked while they wait.
type Plan struct {
	// Load is the load the plan was sized from.
	Load Load `json:"load"`
	// ApprovalsPerDay is TasksPerDay × ApprovalShare × ApprovalsPerTask.
	ApprovalsPerDay float64 `json:"approvals_per_day"`
	// ApprovalsPerHour is the mean hour's approvals, ApprovalsPerDay / 24.
	ApprovalsPerHour float64 `json:"approvals_per_hour"`
	// ApprovalsPerPeakHour is the busiest hour's approvals,
	// ApprovalsPerHour × PeakFactor.
	ApprovalsPerPeakHour float64 `json:"approvals_per_peak_hour"`
	// BusyAtPeak is how many reviewers the peak hour keeps fully busy:
	// its approvals times the review time, in hours.
	BusyAtPeak float64 `json:"reviewers_busy_at_peak"`
	// OnShiftExact is BusyAtPeak / Utilization: the reviewers on shift
	// for the peak at the target utilization, unrounded.
	OnShiftExact float64 `json:"reviewers_on_shift_exact"`
	// OnShift is OnShiftExact rounded up to whole people: any work at all
	// needs one. A figure within a trillionth of itself of a whole number
	// counts as that number, so a rounding error of the arithmetic
	// (3.0000000000000004) plans 3 people, not 4.
	OnShift int `json:"reviewers_on_shift"`
	// ParkedAtPeak is how many tickets are parked at any moment of the
	// peak hour, by Little's law: arrivals per unit of time times the time
	// each waits, with the median wait standing in for the mean.
	ParkedAtPeak float64 `json:"parked_at_peak"`
}

// Size returns the plan for l, or a [*LoadError] when l does not
// [Load.Validate].
func Size(l Load) (Plan, error) {
	if err := l.Validate(); err != nil {
		return Plan{}, err
	}
	p := Plan{Load: l}
	p.ApprovalsPerDay = l.TasksPerDay * l.ApprovalShare * l.ApprovalsPerTask
	p.ApprovalsPerHour = p.ApprovalsPerDay / 24
	p.ApprovalsPerPeakHour = p.ApprovalsPerHour * l.PeakFactor
	p.BusyAtPeak = p.ApprovalsPerPeakHour * l.ReviewTime.Hours()
	p.OnShiftExact = p.BusyAtPeak / l.Utilization
	p.OnShift = wholePeople(p.OnShiftExact)
	p.ParkedAtPeak = p.ApprovalsPerPeakHour * l.MedianWait.Hours()
	return p, nil
}

// wholePeople rounds x up to whole people, except that x within a
// trillionth of itself of a whole number is that number: float arithmetic
// puts 3 × 0.1 / 0.1 at 3.0000000000000004, and that is 3 people.
func wholePeople(x float64) int {
	if n := math.Round(x); math.Abs(x-n) <= 1e-12*x {
		return int(n)
	}
	return int(math.Ceil(x))
}
