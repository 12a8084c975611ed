package fromaudit_test

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/staffing"
	"github.com/agentstepup/asu/staffing/fromaudit"
)

// Plan from an exported audit chain: what the records show replaces the
// base load's figures, and the operator changes only what they mean to.
func ExampleObserve() {
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	var records []audit.Record
	for i := range 40 { // 40 tasks 6 minutes apart, every fourth asking once
		t := start.Add(time.Duration(i) * 6 * time.Minute).UnixMilli()
		task := fmt.Sprintf("task-%d", i)
		records = append(records, audit.Record{Task: task, Decision: audit.DecisionAllow, Time: t})
		if i%4 == 0 {
			records = append(records,
				audit.Record{Task: task, Decision: audit.DecisionNeedsApproval, Time: t},
				audit.Record{Task: task, Decision: audit.DecisionApproved, Time: t + 45_000, DecisionMillis: 45_000})
		}
	}
	o, err := fromaudit.Observe(records)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.0f tasks a day, %.0f%% asking, %.1f approvals each, peak factor %.2f, median decision %s\n",
		o.TasksPerDay, 100*o.ApprovalShare, o.ApprovalsPerTask, o.PeakFactor, o.MedianDecision)
	l, set := o.Apply(staffing.WorkedExample())
	fmt.Println(set)
	p, err := staffing.Size(l)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.0f approvals a day, %d on shift\n", p.ApprovalsPerDay, p.OnShift)
	// Output:
	// 246 tasks a day, 25% asking, 1.0 approvals each, peak factor 1.17, median decision 45s
	// [tasks_per_day approval_share approvals_per_task peak_factor review_time_ns median_wait_ns]
	// 62 approvals a day, 1 on shift
}
