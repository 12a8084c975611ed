package staffing_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/staffing"
)

// The worked example: 20,000 tasks a day, 6% needing approval, 1.2
// approvals each, a peak hour at 3 times the mean and a minute of review
// each, with reviewers kept below 70% utilization and a 20-minute wait.
func ExampleSize() {
	p, err := staffing.Size(staffing.WorkedExample())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.0f approvals a day, %.0f in the peak hour\n", p.ApprovalsPerDay, p.ApprovalsPerPeakHour)
	fmt.Printf("%.1f reviewers busy at peak, %d on shift (%.2f)\n", p.BusyAtPeak, p.OnShift, p.OnShiftExact)
	fmt.Printf("%.0f tickets parked\n", p.ParkedAtPeak)
	// Output:
	// 1440 approvals a day, 180 in the peak hour
	// 3.0 reviewers busy at peak, 5 on shift (4.29)
	// 60 tickets parked
}

// 100,000 tasks a day with 2% needing approval and 90 seconds per review
// needs 11 people on shift. Approving a bound plan once instead of each of
// its steps halves the approvals per task, and the shift drops to 6.
func ExampleSize_exercise() {
	l := staffing.WorkedExample()
	l.TasksPerDay, l.ApprovalShare, l.ReviewTime = 100_000, 0.02, 90*time.Second
	for _, perTask := range []float64{1.2, 0.6} {
		l.ApprovalsPerTask = perTask
		p, err := staffing.Size(l)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%.1f per task: %.0f a day, %.0f at peak, %.2f busy, %d on shift, %.0f parked\n",
			perTask, p.ApprovalsPerDay, p.ApprovalsPerPeakHour, p.BusyAtPeak, p.OnShift, p.ParkedAtPeak)
	}
	// Output:
	// 1.2 per task: 2400 a day, 300 at peak, 7.50 busy, 11 on shift, 100 parked
	// 0.6 per task: 1200 a day, 150 at peak, 3.75 busy, 6 on shift, 50 parked
}

func ExampleLoad_Validate() {
	l := staffing.WorkedExample()
	l.ApprovalShare = 6 // meant 6%
	err := l.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, staffing.ErrInvalidLoad))
	// Output:
	// staffing: invalid load: ApprovalShare is 6; it must be a share from 0 to 1
	// true
}

func ExampleWorkedExample() {
	l := staffing.WorkedExample()
	fmt.Println(l.TasksPerDay, l.ApprovalShare, l.ApprovalsPerTask, l.PeakFactor, l.ReviewTime, l.Utilization, l.MedianWait)
	// Output: 20000 0.06 1.2 3 1m0s 0.7 20m0s
}
