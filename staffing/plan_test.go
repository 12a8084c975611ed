package staffing_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/staffing"
)

func TestSizeWorkedExample(t *testing.T) {
	p, err := staffing.Size(staffing.WorkedExample())
	require.NoError(t, err)
	assert.InDelta(t, 1440, p.ApprovalsPerDay, 1e-9, "20,000 × 6% × 1.2")
	assert.InDelta(t, 60, p.ApprovalsPerHour, 1e-9)
	assert.InDelta(t, 180, p.ApprovalsPerPeakHour, 1e-9, "3 × the mean hour")
	assert.InDelta(t, 3, p.BusyAtPeak, 1e-9, "180 minutes of review in an hour")
	assert.InDelta(t, 3/0.7, p.OnShiftExact, 1e-9)
	assert.True(t, p.OnShiftExact > 4 && p.OnShiftExact < 5, "4 to 5 reviewers on shift: %v", p.OnShiftExact)
	assert.Equal(t, 5, p.OnShift)
	assert.InDelta(t, 60, p.ParkedAtPeak, 1e-9, "180 an hour × 20 minutes")
	assert.Equal(t, staffing.WorkedExample(), p.Load)
}

// The exercise: 100,000 tasks a day, 2% needing approval, 90 seconds of
// review each, everything else as in the worked example. It needs 2,400
// approvals a day, 300 in the peak hour, 7.5 reviewers busy and 11 on
// shift; halving the approvals (by approving bound plans instead of each
// step, or an allowlist that halves the share) halves the busy reviewers
// and brings the shift to 6.
func TestSizeExercise(t *testing.T) {
	l := staffing.WorkedExample()
	l.TasksPerDay, l.ApprovalShare, l.ReviewTime = 100_000, 0.02, 90*time.Second
	p, err := staffing.Size(l)
	require.NoError(t, err)
	assert.InDelta(t, 2400, p.ApprovalsPerDay, 1e-9)
	assert.InDelta(t, 300, p.ApprovalsPerPeakHour, 1e-9)
	assert.InDelta(t, 7.5, p.BusyAtPeak, 1e-9)
	assert.InDelta(t, 7.5/0.7, p.OnShiftExact, 1e-9)
	assert.Equal(t, 11, p.OnShift)
	assert.InDelta(t, 100, p.ParkedAtPeak, 1e-9)

	for _, halve := range []func(*staffing.Load){
		func(l *staffing.Load) { l.ApprovalShare /= 2 },
		func(l *staffing.Load) { l.ApprovalsPerTask /= 2 },
		func(l *staffing.Load) { l.ReviewTime /= 2 },
	} {
		h := l
		halve(&h)
		q, err := staffing.Size(h)
		require.NoError(t, err)
		assert.InDelta(t, p.BusyAtPeak/2, q.BusyAtPeak, 1e-9)
		assert.Equal(t, 6, q.OnShift)
	}
}

func TestSizeRoundsUpButNotRoundingErrors(t *testing.T) {
	tests := []struct {
		name    string
		load    staffing.Load
		onShift int
	}{
		{"three busy at full utilization", withUtil(staffing.WorkedExample(), 1), 3},
		{"a little over three", func() staffing.Load {
			l := withUtil(staffing.WorkedExample(), 1)
			l.ReviewTime += time.Second
			return l
		}(), 4},
		// 24 × 0.1 × 3 / 24 / 0.1 is 3.0000000000000004 in float64.
		{"a rounding error above a whole number", staffing.Load{TasksPerDay: 24, ApprovalShare: 0.1, ApprovalsPerTask: 3,
			PeakFactor: 1, ReviewTime: time.Hour, Utilization: 0.1}, 3},
		{"a rounding error below a whole number", staffing.Load{TasksPerDay: 24, ApprovalShare: 0.7, ApprovalsPerTask: 1,
			PeakFactor: 3, ReviewTime: time.Hour, Utilization: 0.7}, 3},
		{"a fraction of a person is a person", staffing.Load{TasksPerDay: 1, ApprovalShare: 0.01, ApprovalsPerTask: 1,
			PeakFactor: 1, ReviewTime: time.Second, Utilization: 1}, 1},
		{"nobody needs approval", func() staffing.Load { l := staffing.WorkedExample(); l.ApprovalShare = 0; return l }(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := staffing.Size(tt.load)
			require.NoError(t, err)
			assert.Equal(t, tt.onShift, p.OnShift, "exact %v", p.OnShiftExact)
			if tt.name == "a rounding error above a whole number" {
				assert.Greater(t, p.OnShiftExact, 3.0, "the case this test is about")
			}
		})
	}
}

func withUtil(l staffing.Load, u float64) staffing.Load {
	l.Utilization = u
	return l
}

func TestSizeRefusesBadLoads(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		field string
		set   func(*staffing.Load)
	}{
		{"TasksPerDay", func(l *staffing.Load) { l.TasksPerDay = -1 }},
		{"TasksPerDay", func(l *staffing.Load) { l.TasksPerDay = nan }},
		{"TasksPerDay", func(l *staffing.Load) { l.TasksPerDay = inf }},
		{"TasksPerDay", func(l *staffing.Load) { l.TasksPerDay = 1e10 }},
		{"ApprovalShare", func(l *staffing.Load) { l.ApprovalShare = 1.01 }},
		{"ApprovalShare", func(l *staffing.Load) { l.ApprovalShare = -0.01 }},
		{"ApprovalShare", func(l *staffing.Load) { l.ApprovalShare = nan }},
		{"ApprovalsPerTask", func(l *staffing.Load) { l.ApprovalsPerTask = -1 }},
		{"ApprovalsPerTask", func(l *staffing.Load) { l.ApprovalsPerTask = 101 }},
		{"PeakFactor", func(l *staffing.Load) { l.PeakFactor = 0.9 }},
		{"PeakFactor", func(l *staffing.Load) { l.PeakFactor = 0 }},
		{"PeakFactor", func(l *staffing.Load) { l.PeakFactor = 1001 }},
		{"PeakFactor", func(l *staffing.Load) { l.PeakFactor = math.Inf(-1) }},
		{"ReviewTime", func(l *staffing.Load) { l.ReviewTime = 0 }},
		{"ReviewTime", func(l *staffing.Load) { l.ReviewTime = -time.Second }},
		{"ReviewTime", func(l *staffing.Load) { l.ReviewTime = 25 * time.Hour }},
		{"Utilization", func(l *staffing.Load) { l.Utilization = 0 }},
		{"Utilization", func(l *staffing.Load) { l.Utilization = 1.2 }},
		{"Utilization", func(l *staffing.Load) { l.Utilization = 0.001 }},
		{"Utilization", func(l *staffing.Load) { l.Utilization = nan }},
		{"MedianWait", func(l *staffing.Load) { l.MedianWait = -time.Minute }},
		{"MedianWait", func(l *staffing.Load) { l.MedianWait = 31 * 24 * time.Hour }},
	}
	for _, tt := range tests {
		l := staffing.WorkedExample()
		tt.set(&l)
		_, err := staffing.Size(l)
		require.ErrorIs(t, err, staffing.ErrInvalidLoad, tt.field)
		var le *staffing.LoadError
		require.True(t, errors.As(err, &le))
		assert.Equal(t, tt.field, le.Field)
		assert.Contains(t, err.Error(), tt.field+" is ")
		assert.Contains(t, err.Error(), "it must be")
	}
}

func TestSizeEdgesAreValid(t *testing.T) {
	for _, set := range []func(*staffing.Load){
		func(l *staffing.Load) { l.TasksPerDay = 0 },
		func(l *staffing.Load) { l.TasksPerDay = staffing.MaxTasksPerDay },
		func(l *staffing.Load) { l.ApprovalShare = 1 },
		func(l *staffing.Load) { l.ApprovalsPerTask = staffing.MaxApprovalsPerTask },
		func(l *staffing.Load) { l.PeakFactor = 1 },
		func(l *staffing.Load) { l.PeakFactor = staffing.MaxPeakFactor },
		func(l *staffing.Load) { l.ReviewTime = time.Nanosecond },
		func(l *staffing.Load) { l.ReviewTime = staffing.MaxReviewTime },
		func(l *staffing.Load) { l.Utilization = 1 },
		func(l *staffing.Load) { l.Utilization = staffing.MinUtilization },
		func(l *staffing.Load) { l.MedianWait = 0 },
		func(l *staffing.Load) { l.MedianWait = staffing.MaxMedianWait },
	} {
		l := staffing.WorkedExample()
		set(&l)
		_, err := staffing.Size(l)
		assert.NoError(t, err, "%+v", l)
	}
}

// randomLoad draws a valid load across the whole of every range.
func randomLoad(rng *rand.Rand) staffing.Load {
	logUniform := func(lo, hi float64) float64 { return lo * math.Pow(hi/lo, rng.Float64()) }
	return staffing.Load{
		TasksPerDay:      math.Floor(logUniform(1, staffing.MaxTasksPerDay)),
		ApprovalShare:    rng.Float64(),
		ApprovalsPerTask: logUniform(0.01, staffing.MaxApprovalsPerTask),
		PeakFactor:       logUniform(1, staffing.MaxPeakFactor),
		ReviewTime:       time.Duration(logUniform(1e6, float64(staffing.MaxReviewTime))),
		Utilization:      logUniform(staffing.MinUtilization, 1),
		MedianWait:       time.Duration(logUniform(1e6, float64(staffing.MaxMedianWait))),
	}
}

// Properties of the model on random valid loads: the figures are finite,
// follow from each other as documented, and enough people are on shift.
func TestSizeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 5000 {
		l := randomLoad(rng)
		p, err := staffing.Size(l)
		require.NoError(t, err, "%+v", l)
		for _, v := range []float64{p.ApprovalsPerDay, p.ApprovalsPerHour, p.ApprovalsPerPeakHour, p.BusyAtPeak, p.OnShiftExact, p.ParkedAtPeak} {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0) || v < 0, "%+v", p)
		}
		rel := func(want, got float64) { assert.InDelta(t, 1, got/max(want, 1e-300), 1e-9, "%+v", p) }
		rel(p.ApprovalsPerDay*l.PeakFactor/24, p.ApprovalsPerPeakHour)
		rel(p.ApprovalsPerPeakHour*l.ReviewTime.Seconds()/3600, p.BusyAtPeak)
		rel(p.BusyAtPeak/l.Utilization, p.OnShiftExact)
		// Little's law: parked tickets are arrivals times the wait.
		rel(p.ApprovalsPerPeakHour/3600*l.MedianWait.Seconds(), p.ParkedAtPeak)
		assert.GreaterOrEqual(t, float64(p.OnShift), p.OnShiftExact*(1-1e-12), "enough people")
		assert.Equal(t, p.ApprovalsPerDay > 0, p.OnShift > 0, "any work needs someone")
		assert.Less(t, float64(p.OnShift), p.OnShiftExact+1, "and not one too many")
		assert.GreaterOrEqual(t, float64(p.OnShift)*l.Utilization, p.BusyAtPeak*(1-1e-12), "the shift covers the peak")

		// More work never needs fewer people.
		more := l
		more.TasksPerDay = min(l.TasksPerDay*2, staffing.MaxTasksPerDay)
		q, err := staffing.Size(more)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, q.OnShift, p.OnShift)
	}
}
