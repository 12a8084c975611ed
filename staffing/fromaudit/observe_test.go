package fromaudit_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/staffing"
	"github.com/agentstepup/asu/staffing/fromaudit"
)

var dayStart = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) int64 { return dayStart.Add(d).UnixMilli() }

// workedExampleDay is a day of audit records built to be the worked
// example: 20,000 tasks over exactly 24 hours, 1,200 of them (6%) asking
// for approval, 240 of those twice (1.2 each, 1,440 requests), the
// busiest hour holding 180 requests (3 × the mean hour of 60), and every
// request decided in 60 seconds.
//
// The peak hour's requests sit at 10:20 to 10:35, 5 seconds apart; every
// other hour's 54 or 55 sit 10 seconds apart from its start, except
// 11:00's, which start at 11:40, so no 60 minutes hold more than 180.
func workedExampleDay() []audit.Record {
	var out []audit.Record
	for i := range 20_000 {
		out = append(out, audit.Record{Task: fmt.Sprintf("task-%d", i), Decision: audit.DecisionAllow,
			Time: at(time.Duration(i) * 24 * time.Hour / 20_000)})
	}
	out = append(out, audit.Record{Task: "task-0", Decision: audit.DecisionExecuted, Time: at(24 * time.Hour)})
	var times []time.Duration
	offPeak := 0
	for h := range 24 {
		hour := time.Duration(h) * time.Hour
		switch h {
		case 10:
			for i := range 180 {
				times = append(times, hour+20*time.Minute+time.Duration(i)*5*time.Second)
			}
			continue
		case 11:
			hour += 40 * time.Minute
		}
		n := 54 // 1,260 off-peak requests over 23 hours: 18 hours of 55, 5 of 54
		if offPeak < 18 {
			n = 55
		}
		offPeak++
		for i := range n {
			times = append(times, hour+time.Duration(i)*10*time.Second)
		}
	}
	for j, t := range times {
		task := fmt.Sprintf("task-%d", j%1200)
		out = append(out,
			audit.Record{Task: task, Decision: audit.DecisionNeedsApproval, Time: at(t)},
			audit.Record{Task: task, Decision: audit.DecisionApproved, Approver: "user:dana",
				Time: at(t + time.Minute), DecisionMillis: 60_000})
	}
	return out
}

func TestObserveRecoversTheWorkedExample(t *testing.T) {
	records := workedExampleDay()
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(records), func(i, j int) { records[i], records[j] = records[j], records[i] })
	o, err := fromaudit.Observe(records)
	require.NoError(t, err)
	assert.Equal(t, len(records), o.Records)
	assert.Equal(t, at(0), o.From)
	assert.Equal(t, at(24*time.Hour), o.To)
	assert.InDelta(t, 1, o.Days, 1e-12)
	assert.Equal(t, 20_000, o.Tasks)
	assert.Equal(t, 1_200, o.TasksWithApproval)
	assert.Equal(t, 1_440, o.Requests)
	assert.Equal(t, 1_440, o.Decisions)
	assert.Equal(t, 180, o.PeakHourRequests)
	assert.Equal(t, time.Minute, o.MedianDecision)
	assert.InDelta(t, 20_000, o.TasksPerDay, 1e-9)
	assert.InDelta(t, 0.06, o.ApprovalShare, 1e-12)
	assert.InDelta(t, 1.2, o.ApprovalsPerTask, 1e-12)
	assert.InDelta(t, 1440, o.ApprovalsPerDay, 1e-9)
	assert.InDelta(t, 3, o.PeakFactor, 1e-12)

	// Everything but the target utilization is observed; the observed
	// wait is the minute to decision, so a 20-minute wait is set by hand.
	l, set := o.Apply(staffing.Load{Utilization: 0.7})
	assert.Equal(t, []string{staffing.FieldTasksPerDay, staffing.FieldApprovalShare, staffing.FieldApprovalsPerTask,
		staffing.FieldPeakFactor, staffing.FieldReviewTime, staffing.FieldMedianWait}, set)
	assert.Equal(t, time.Minute, l.MedianWait)
	l.MedianWait = 20 * time.Minute
	p, err := staffing.Size(l)
	require.NoError(t, err)
	want, err := staffing.Size(staffing.WorkedExample())
	require.NoError(t, err)
	assert.InDelta(t, want.ApprovalsPerDay, p.ApprovalsPerDay, 1e-9)
	assert.InDelta(t, want.ApprovalsPerPeakHour, p.ApprovalsPerPeakHour, 1e-9)
	assert.InDelta(t, want.BusyAtPeak, p.BusyAtPeak, 1e-9)
	assert.Equal(t, want.OnShift, p.OnShift)
	assert.InDelta(t, want.ParkedAtPeak, p.ParkedAtPeak, 1e-9)
}

// Generated record sets with figures known by construction: a span of
// whole hours, tasks of which some ask for approvals, a burst of requests
// in one place and the rest at least an hour and a minute apart from it
// and from each other, and decision times forming a progression.
func TestObserveGeneratedFiguresAreKnown(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for n := range 300 {
		hours := 1 + rng.IntN(24*14)
		tasks := 1 + rng.IntN(400)
		asking := rng.IntN(tasks + 1)
		var records []audit.Record
		records = append(records,
			audit.Record{Task: "task-0", Decision: audit.DecisionAllow, Time: at(0)},
			audit.Record{Task: "task-0", Decision: audit.DecisionDeny, Time: at(time.Duration(hours) * time.Hour)})
		for i := range tasks {
			records = append(records, audit.Record{Task: fmt.Sprintf("task-%d", i), Decision: audit.DecisionAllow,
				Time: at(time.Duration(rng.Int64N(int64(hours) * int64(time.Hour))))})
		}
		// Request times: a burst of up to 500 a second apart, then others
		// 61 minutes apart outside 61 minutes of it.
		var times []time.Duration
		burst, burstAt := 0, time.Duration(rng.Int64N(int64(hours)))*time.Hour
		if asking > 0 {
			burst = 1 + rng.IntN(500)
			for i := range burst {
				times = append(times, burstAt+time.Duration(i)*time.Second)
			}
			burstEnd := burstAt + time.Duration(burst-1)*time.Second
			for t := time.Duration(0); t <= time.Duration(hours)*time.Hour; t += 61 * time.Minute {
				if (t <= burstAt-61*time.Minute || t >= burstEnd+61*time.Minute) && rng.IntN(2) == 0 {
					times = append(times, t)
				}
			}
		}
		// Every asking task gets at least one request.
		for len(times) > 0 && len(times) < asking {
			times = append(times, times[0])
			burst++ // a duplicate of the burst's first request joins the burst
		}
		var decisions []int64
		base, step := rng.Int64N(100_000), rng.Int64N(10_000)
		for k := range rng.IntN(len(times) + 1) {
			decisions = append(decisions, base+step*int64(k))
		}
		rng.Shuffle(len(decisions), func(i, j int) { decisions[i], decisions[j] = decisions[j], decisions[i] })
		for j, tm := range times {
			task := fmt.Sprintf("task-%d", j%asking)
			records = append(records, audit.Record{Task: task, Decision: audit.DecisionNeedsApproval, Time: at(tm)})
			if j < len(decisions) {
				d := []string{audit.DecisionApproved, audit.DecisionDenied}[rng.IntN(2)]
				records = append(records, audit.Record{Task: task, Decision: d, Time: at(tm), DecisionMillis: decisions[j]})
			}
		}
		rng.Shuffle(len(records), func(i, j int) { records[i], records[j] = records[j], records[i] })

		o, err := fromaudit.Observe(records)
		require.NoError(t, err)
		msg := fmt.Sprintf("set %d: %d hours, %d tasks, %d asking, burst %d", n, hours, tasks, asking, burst)
		days := float64(hours) / 24
		require.InDelta(t, days, o.Days, 1e-12, msg)
		assert.Equal(t, tasks, o.Tasks, msg)
		assert.Equal(t, asking, o.TasksWithApproval, msg)
		assert.Equal(t, len(times), o.Requests, msg)
		assert.Equal(t, len(decisions), o.Decisions, msg)
		assert.InDelta(t, float64(tasks)/days, o.TasksPerDay, 1e-9*o.TasksPerDay, msg)
		assert.InDelta(t, float64(asking)/float64(tasks), o.ApprovalShare, 1e-12, msg)
		assert.InDelta(t, float64(len(times))/days, o.ApprovalsPerDay, 1e-9*max(o.ApprovalsPerDay, 1), msg)
		assert.InDelta(t, o.TasksPerDay*o.ApprovalShare*o.ApprovalsPerTask, o.ApprovalsPerDay, 1e-9*max(o.ApprovalsPerDay, 1), msg)
		if nd := len(decisions); nd > 0 {
			median := float64(base) + float64(step)*float64(nd-1)/2
			assert.Equal(t, time.Duration(median*float64(time.Millisecond)), o.MedianDecision, msg)
		} else {
			assert.Zero(t, o.MedianDecision)
		}
		if asking == 0 {
			assert.Zero(t, o.PeakHourRequests, msg)
			assert.Zero(t, o.PeakFactor, msg)
			assert.Zero(t, o.ApprovalsPerTask, msg)
			continue
		}
		assert.Equal(t, burst, o.PeakHourRequests, msg)
		assert.InDelta(t, max(float64(burst)/(float64(len(times))/float64(hours)), 1), o.PeakFactor, 1e-9, msg)
		assert.InDelta(t, float64(len(times))/float64(asking), o.ApprovalsPerTask, 1e-12, msg)
	}
}

func TestObserveApplySetsOnlyWhatWasSeen(t *testing.T) {
	base := staffing.WorkedExample()
	allowOnly := []audit.Record{
		{Task: "a", Decision: audit.DecisionAllow, Time: at(0)},
		{Task: "b", Decision: audit.DecisionAllow, Time: at(48 * time.Hour)},
	}
	o, err := fromaudit.Observe(allowOnly)
	require.NoError(t, err)
	l, set := o.Apply(base)
	assert.Equal(t, []string{staffing.FieldTasksPerDay, staffing.FieldApprovalShare}, set)
	assert.InDelta(t, 1, l.TasksPerDay, 1e-12, "two tasks over two days")
	assert.Zero(t, l.ApprovalShare, "nothing asked, and that was observed")
	assert.Equal(t, base.ApprovalsPerTask, l.ApprovalsPerTask)
	assert.Equal(t, base.PeakFactor, l.PeakFactor)
	assert.Equal(t, base.ReviewTime, l.ReviewTime)
	assert.Equal(t, base.MedianWait, l.MedianWait)
	assert.Equal(t, base.Utilization, l.Utilization)

	// Requests without decisions: the review time stays the base's.
	asked := append(allowOnly, audit.Record{Task: "a", Decision: audit.DecisionNeedsApproval, Time: at(time.Hour)})
	o, err = fromaudit.Observe(asked)
	require.NoError(t, err)
	l, set = o.Apply(base)
	assert.Equal(t, []string{staffing.FieldTasksPerDay, staffing.FieldApprovalShare, staffing.FieldApprovalsPerTask, staffing.FieldPeakFactor}, set)
	assert.InDelta(t, 0.5, l.ApprovalShare, 1e-12)
	assert.InDelta(t, 1, l.ApprovalsPerTask, 1e-12)
	assert.InDelta(t, 48, l.PeakFactor, 1e-12, "one request in 48 hours, all in one hour")
	assert.Equal(t, base.ReviewTime, l.ReviewTime)
	_, err = staffing.Size(l)
	assert.NoError(t, err)
}

func TestObserveEdges(t *testing.T) {
	_, err := fromaudit.Observe(nil)
	assert.ErrorIs(t, err, fromaudit.ErrNoRecords)
	_, err = fromaudit.Observe([]audit.Record{})
	assert.ErrorIs(t, err, fromaudit.ErrNoRecords)

	// One record: a span of one hour at least, and tasks without a name
	// are one task.
	o, err := fromaudit.Observe([]audit.Record{{Decision: audit.DecisionNeedsApproval, Time: at(0)}})
	require.NoError(t, err)
	assert.InDelta(t, 1.0/24, o.Days, 1e-15)
	assert.Equal(t, 1, o.Tasks)
	assert.InDelta(t, 24, o.TasksPerDay, 1e-12)
	assert.InDelta(t, 1, o.PeakFactor, 1e-12)

	// Forged times at the ends of int64 neither panic nor wrap.
	const huge = math.MaxInt64
	o, err = fromaudit.Observe([]audit.Record{
		{Decision: audit.DecisionNeedsApproval, Time: -huge - 1},
		{Decision: audit.DecisionNeedsApproval, Time: huge},
		{Decision: audit.DecisionApproved, DecisionMillis: huge},
		{Decision: audit.DecisionApproved, DecisionMillis: huge},
	})
	require.NoError(t, err)
	assert.Greater(t, o.Days, 1e8)
	assert.Equal(t, 1, o.PeakHourRequests)
	assert.Equal(t, time.Duration(math.MaxInt64), o.MedianDecision, "saturated")
	l, _ := o.Apply(staffing.WorkedExample())
	_, err = staffing.Size(l)
	assert.ErrorIs(t, err, staffing.ErrInvalidLoad, "a review time past the bound is refused, not planned")
}

// BenchmarkObserve reads a day of the worked example (23,000 records).
func BenchmarkObserve(b *testing.B) {
	records := workedExampleDay()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fromaudit.Observe(records); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(records)), "ns/record")
}
