package staffing

import "time"

// Observed are the figures of a [Load] as audit records show them, as
// package [github.com/agentstepup/asu/staffing/fromaudit] reads them from
// an exported audit chain. Every figure comes from the records alone:
// times are the records' own, a task is a value of the record's task
// field (rows without one count as one task), and an approval request is
// a needs_approval row.
type Observed struct {
	// Records is how many records were read; From and To are the
	// earliest and the latest of their times (Unix milliseconds, as
	// audit.Record.Time).
	Records int   `json:"records"`
	From    int64 `json:"from"`
	To      int64 `json:"to"`
	// Days is the span from From to To in days, at least one hour's worth
	// (1/24), so that a burst of records is not read as an endless rate.
	Days float64 `json:"days"`
	// Tasks counts distinct tasks; TasksWithApproval those that asked for
	// at least one approval.
	Tasks             int `json:"tasks"`
	TasksWithApproval int `json:"tasks_with_approval"`
	// Requests counts approval requests (needs_approval rows), Decisions
	// the approvers' decisions (approved and denied rows).
	Requests  int `json:"requests"`
	Decisions int `json:"decisions"`
	// PeakHourRequests is the most requests within any 60 minutes.
	PeakHourRequests int `json:"peak_hour_requests"`
	// MedianDecision is the median time from request to decision
	// (audit.Record.DecisionMillis of approved and denied rows). It
	// includes the time a ticket waited, so it is the observed median wait
	// and an upper bound on the review time.
	MedianDecision time.Duration `json:"median_decision_ns"`

	// TasksPerDay is Tasks / Days.
	TasksPerDay float64 `json:"tasks_per_day"`
	// ApprovalShare is TasksWithApproval / Tasks.
	ApprovalShare float64 `json:"approval_share"`
	// ApprovalsPerTask is Requests / TasksWithApproval, zero without
	// requests.
	ApprovalsPerTask float64 `json:"approvals_per_task"`
	// ApprovalsPerDay is Requests / Days: the product of the three above.
	ApprovalsPerDay float64 `json:"approvals_per_day"`
	// PeakFactor is PeakHourRequests over the mean hour's requests
	// (Requests / (24 × Days)), at least 1; zero without requests.
	PeakFactor float64 `json:"peak_factor"`
}

// Load field names, as [Observed.Apply] reports them.
const (
	FieldTasksPerDay      = "tasks_per_day"
	FieldApprovalShare    = "approval_share"
	FieldApprovalsPerTask = "approvals_per_task"
	FieldPeakFactor       = "peak_factor"
	FieldReviewTime       = "review_time_ns"
	FieldMedianWait       = "median_wait_ns"
)

// Apply returns base with the figures o observed put in its place, and
// the JSON names of the [Load] fields it set. Tasks per day and the share
// needing approval are observed whenever there were records (Tasks is
// not zero); approvals per task and the peak
// factor only when there were requests; the review time and the median
// wait, both the median time to decision, only when there were decisions.
// Utilization is a target, never observed.
//
// Taking the median time to decision as the review time is conservative:
// it includes the wait, so it overstates the reviewers needed when tickets
// waited. Override it with a measured review time where there is one.
func (o Observed) Apply(base Load) (Load, []string) {
	l := base
	if o.Tasks == 0 {
		return l, []string{}
	}
	set := []string{FieldTasksPerDay, FieldApprovalShare}
	l.TasksPerDay, l.ApprovalShare = o.TasksPerDay, o.ApprovalShare
	if o.Requests > 0 {
		l.ApprovalsPerTask, l.PeakFactor = o.ApprovalsPerTask, o.PeakFactor
		set = append(set, FieldApprovalsPerTask, FieldPeakFactor)
	}
	if o.Decisions > 0 {
		l.ReviewTime, l.MedianWait = o.MedianDecision, o.MedianDecision
		set = append(set, FieldReviewTime, FieldMedianWait)
	}
	return l, set
}
