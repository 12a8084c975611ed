package staffing_test

import (
	"math"
	"testing"
	"time"

	"github.com/agentstepup/asu/staffing"
)

// checkPlan fails t unless every figure of p is finite and not negative,
// and the shift covers the peak.
func checkPlan(t *testing.T, p staffing.Plan) {
	t.Helper()
	for _, v := range []float64{p.ApprovalsPerDay, p.ApprovalsPerHour, p.ApprovalsPerPeakHour, p.BusyAtPeak, p.OnShiftExact, p.ParkedAtPeak} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("figure %v in %+v", v, p)
		}
	}
	if p.OnShift < 0 || float64(p.OnShift) < p.OnShiftExact*(1-1e-12) {
		t.Fatalf("%d on shift for %v", p.OnShift, p.OnShiftExact)
	}
}

// FuzzSize: any figures either are refused with ErrInvalidLoad or give a
// plan whose figures are finite.
func FuzzSize(f *testing.F) {
	w := staffing.WorkedExample()
	f.Add(w.TasksPerDay, w.ApprovalShare, w.ApprovalsPerTask, w.PeakFactor, int64(w.ReviewTime), w.Utilization, int64(w.MedianWait))
	f.Add(1e9, 1.0, 100.0, 1000.0, int64(24*time.Hour), 0.01, int64(30*24*time.Hour))
	f.Add(math.NaN(), math.Copysign(0, -1), math.Inf(1), 0.5, int64(-1), 2.0, int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, tasks, share, perTask, peak float64, review int64, util float64, wait int64) {
		l := staffing.Load{TasksPerDay: tasks, ApprovalShare: share, ApprovalsPerTask: perTask, PeakFactor: peak,
			ReviewTime: time.Duration(review), Utilization: util, MedianWait: time.Duration(wait)}
		p, err := staffing.Size(l)
		if err != nil {
			if l.Validate() == nil {
				t.Fatalf("Size refused a load Validate accepts: %v", err)
			}
			return
		}
		checkPlan(t, p)
	})
}
