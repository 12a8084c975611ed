package staffing

import (
	"errors"
	"fmt"
	"time"
)

// Load is what the queue is sized from: how much work arrives, how it is
// spread over the day, how long a review takes, and how hard reviewers
// may be worked.
type Load struct {
	// TasksPerDay is how many agent tasks run in a day.
	TasksPerDay float64 `json:"tasks_per_day"`
	// ApprovalShare is the share of tasks that need a person's approval,
	// from 0 to 1.
	ApprovalShare float64 `json:"approval_share"`
	// ApprovalsPerTask is how many approvals such a task asks for, on
	// average.
	ApprovalsPerTask float64 `json:"approvals_per_task"`
	// PeakFactor is the busiest hour's approvals over the mean hour's, at
	// least 1.
	PeakFactor float64 `json:"peak_factor"`
	// ReviewTime is the real review time of one approval: reading the
	// card and deciding.
	ReviewTime time.Duration `json:"review_time_ns"`
	// Utilization is the share of a reviewer's time spent reviewing that
	// the plan aims at, in (0, 1]. Queues wait long as utilization nears
	// 1; below about 0.7 waits stay short.
	Utilization float64 `json:"target_utilization"`
	// MedianWait is how long a ticket waits for its decision, for the
	// count of parked tickets.
	MedianWait time.Duration `json:"median_wait_ns"`
}

// WorkedExample returns the load of the worked example: 20,000 tasks a
// day, 6% needing approval, 1.2 approvals each, the peak hour at 3 times
// the mean, 60 seconds of review each, reviewers kept at 70% utilization
// and a 20-minute median wait.
func WorkedExample() Load {
	return Load{TasksPerDay: 20_000, ApprovalShare: 0.06, ApprovalsPerTask: 1.2, PeakFactor: 3,
		ReviewTime: time.Minute, Utilization: 0.7, MedianWait: 20 * time.Minute}
}

// Bounds on a [Load]. They refuse nonsense, not large deployments: each
// is far past any real queue, and together they keep every figure of a
// [Plan] finite and the head count within an int.
const (
	// MaxTasksPerDay is a billion tasks a day, about 11,600 a second.
	MaxTasksPerDay = 1e9
	// MaxApprovalsPerTask is a hundred approvals for one task.
	MaxApprovalsPerTask = 100
	// MaxPeakFactor bounds the peak factor. Within one day the busiest
	// hour holds at most 24 mean hours; observed over weeks with quiet
	// days it can hold more, so the bound is on magnitude only.
	MaxPeakFactor = 1000
	// MaxReviewTime is a day spent on one review.
	MaxReviewTime = 24 * time.Hour
	// MinUtilization is a reviewer busy 1% of the time.
	MinUtilization = 0.01
	// MaxMedianWait is a ticket waiting 30 days.
	MaxMedianWait = 30 * 24 * time.Hour
)

// ErrInvalidLoad is wrapped by every error about a [Load]'s figures.
var ErrInvalidLoad = errors.New("staffing: invalid load")

// LoadError names the first figure of a [Load] that is out of range.
type LoadError struct {
	Field string // the Load field, such as "ApprovalShare"
	Value string // the value as given
	Want  string // the range the field must be in
}

// Error says which figure is wrong and what it must be.
func (e *LoadError) Error() string {
	return fmt.Sprintf("%v: %s is %s; it must be %s", ErrInvalidLoad, e.Field, e.Value, e.Want)
}

// Unwrap returns [ErrInvalidLoad].
func (e *LoadError) Unwrap() error { return ErrInvalidLoad }

// Validate returns a [*LoadError] for the first figure of l that is
// negative, NaN, infinite or otherwise out of its range, or nil. [Size] calls it.
func (l Load) Validate() error {
	// Written as !(in range) so that NaN, which compares false, fails.
	num := func(field string, v, lo, hi float64, want string) error {
		if !(v >= lo && v <= hi) {
			return &LoadError{Field: field, Value: fmt.Sprint(v), Want: want}
		}
		return nil
	}
	dur := func(field string, v, lo, hi time.Duration, want string) error {
		if v < lo || v > hi {
			return &LoadError{Field: field, Value: v.String(), Want: want}
		}
		return nil
	}
	for _, err := range []error{
		num("TasksPerDay", l.TasksPerDay, 0, MaxTasksPerDay, fmt.Sprintf("from 0 to %g", float64(MaxTasksPerDay))),
		num("ApprovalShare", l.ApprovalShare, 0, 1, "a share from 0 to 1"),
		num("ApprovalsPerTask", l.ApprovalsPerTask, 0, MaxApprovalsPerTask, fmt.Sprintf("from 0 to %d", MaxApprovalsPerTask)),
		num("PeakFactor", l.PeakFactor, 1, MaxPeakFactor, fmt.Sprintf("from 1 (a flat day) to %d", MaxPeakFactor)),
		dur("ReviewTime", l.ReviewTime, time.Nanosecond, MaxReviewTime, "more than 0 and at most "+MaxReviewTime.String()),
		num("Utilization", l.Utilization, MinUtilization, 1, fmt.Sprintf("in (0, 1], at least %g", MinUtilization)),
		dur("MedianWait", l.MedianWait, 0, MaxMedianWait, "from 0 to "+MaxMedianWait.String()),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
