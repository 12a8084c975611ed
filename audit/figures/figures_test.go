package figures_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
)

var chainStart = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func rec(class, decision, approver string, at time.Duration, decisionMillis int64) audit.Record {
	return audit.Record{EffectClass: class, Decision: decision, Approver: approver,
		Time: chainStart.Add(at).UnixMilli(), DecisionMillis: decisionMillis}
}

// rate and median read a nil-able figure for a test; a nil one fails.
func rate(t *testing.T, d figures.Decisions) float64 {
	t.Helper()
	require.NotNil(t, d.ApprovalRate)
	return *d.ApprovalRate
}

func medianOf(t *testing.T, d figures.Decisions) time.Duration {
	t.Helper()
	require.NotNil(t, d.Time)
	return d.Time.Median()
}

func perHour(t *testing.T, p figures.Pace) float64 {
	t.Helper()
	require.NotNil(t, p.ApprovalsPerActiveHour)
	return *p.ApprovalsPerActiveHour
}

func TestCompute(t *testing.T) {
	records := []audit.Record{
		rec("external", audit.DecisionNeedsApproval, "", 0, 0),
		rec("external", audit.DecisionApproved, "dana", time.Minute, 3000),
		rec("external", audit.DecisionNeedsApproval, "", 2*time.Minute, 0),
		rec("external", audit.DecisionApproved, "dana", 3*time.Minute, 2000),
		rec("external", audit.DecisionNeedsApproval, "", 4*time.Minute, 0),
		rec("external", audit.DecisionApproved, "dana", 5*time.Minute, 4000),
		rec("external", audit.DecisionNeedsApproval, "", 6*time.Minute, 0),
		rec("external", audit.DecisionDenied, "lee", 7*time.Minute, 60000),
		rec("irreversible", audit.DecisionNeedsApproval, "", 0, 0),
		rec("irreversible", audit.DecisionApproved, "lee", 3*time.Hour, 90000),
		rec("irreversible", audit.DecisionNeedsApproval, "", 0, 0),
		rec("irreversible", audit.DecisionExpired, "", 20*time.Minute, 0),
		rec("read", audit.DecisionAllow, "", 0, 0),
	}
	m := figures.Compute(records)

	ext := m.ByClass["external"]
	assert.Equal(t, 4, ext.Asked)
	assert.Equal(t, 3, ext.Approvals)
	assert.Equal(t, 1, ext.Denials)
	assert.InDelta(t, 0.75, rate(t, ext.Decisions), 1e-9)
	assert.Equal(t, 3500*time.Millisecond, medianOf(t, ext.Decisions), "median of 2, 3, 4 and 60 seconds")
	assert.Equal(t, 1, ext.Reviewers)
	assert.Equal(t, int64(4*60_000), ext.ActiveMillis, "dana's first to last approval, as measured")
	assert.InDelta(t, 30.0, perHour(t, ext.Pace), 1e-9, "two gaps in four minutes, not rounded up to an hour")
	assert.Equal(t, 3, ext.PeakHour)

	irr := m.ByClass["irreversible"]
	assert.Equal(t, 2, irr.Asked)
	assert.Equal(t, 1, irr.Lapsed)
	assert.InDelta(t, 1.0, rate(t, irr.Decisions), 1e-9)
	assert.Equal(t, 90*time.Second, medianOf(t, irr.Decisions))
	assert.Zero(t, irr.ActiveMillis, "one approval spans no time")
	assert.Nil(t, irr.ApprovalsPerActiveHour, "and has no pace")

	read := m.ByClass["read"]
	assert.Nil(t, read.ApprovalRate, "no decisions, no rate")
	assert.Nil(t, read.Time, "no decisions, no decision time")

	all := m.Overall
	assert.Equal(t, 6, all.Asked)
	assert.Equal(t, 4, all.Approvals)
	assert.InDelta(t, 0.8, rate(t, all.Decisions), 1e-9)
	assert.Equal(t, 4*time.Second, medianOf(t, all.Decisions), "median of 2, 3, 4, 60 and 90 seconds")
	assert.Equal(t, 2, all.Reviewers)
	assert.InDelta(t, 30.0, perHour(t, all.Pace), 1e-9, "lee's one approval adds no gap and no time")

	require.NotNil(t, m.Window)
	assert.Equal(t, figures.Window{From: chainStart.UnixMilli(), To: chainStart.Add(3 * time.Hour).UnixMilli(), Records: len(records)}, *m.Window)
	require.NotNil(t, m.PeakHour)
	assert.Equal(t, figures.Peak{Start: chainStart.Add(time.Minute).UnixMilli(), Approvals: 3}, *m.PeakHour)
}

// TestComputePaceIsMeasured: 27 approvals in two minutes read as what
// they are, 13 a minute, not 27 an hour (the figure a rounding up of the
// active time to one hour gave).
func TestComputePaceIsMeasured(t *testing.T) {
	var records []audit.Record
	for i := range 27 {
		records = append(records, rec("external", audit.DecisionApproved, "user:dana",
			time.Duration(i)*(2*time.Minute)/26, 1000))
	}
	a := figures.Compute(records).ByApprover["user:dana"]
	assert.Equal(t, int64(2*60_000), a.ActiveMillis)
	assert.InDelta(t, 13.0*60, perHour(t, a.Pace), 1e-9)
	assert.Equal(t, 27, a.PeakHour)
}

func TestComputePeakUsesSlidingHour(t *testing.T) {
	var records []audit.Record
	// 30 approvals a minute apart, then one three hours later.
	for i := range 30 {
		records = append(records, rec("external", audit.DecisionApproved, "dana", time.Duration(i)*time.Minute, 1000))
	}
	records = append(records, rec("external", audit.DecisionApproved, "dana", 3*time.Hour, 1000))
	m := figures.Compute(records)
	assert.Equal(t, 30, m.Overall.PeakHour)
	assert.Equal(t, &figures.Peak{Start: chainStart.UnixMilli(), Approvals: 30}, m.PeakHour)
	assert.InDelta(t, 30.0/3.0, perHour(t, m.Overall.Pace), 1e-9, "30 gaps in three hours")
	assert.Equal(t, 1.0, rate(t, m.Overall.Decisions), "fatigue shows as a rate of 1 and one-second decisions")
	assert.Equal(t, time.Second, medianOf(t, m.Overall.Decisions))
}

func TestComputeEmpty(t *testing.T) {
	for _, records := range [][]audit.Record{nil, {}} {
		m := figures.Compute(records)
		assert.Zero(t, m.Overall)
		assert.Nil(t, m.Window)
		assert.Nil(t, m.PeakHour)
		assert.Empty(t, m.ByClass)
		assert.Empty(t, m.ByApprover)
		assert.Empty(t, m.Warnings)
		assert.Equal(t, figures.DefaultRubberStampRule(), m.Rule)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"warnings":[]`, "an empty list, not null")
		assert.Contains(t, string(b), `"approval_rate":null`, "no decisions yet, not 0%")
		assert.Contains(t, string(b), `"decision_time":null`, "no decisions yet, not a median of 0s")
		assert.Contains(t, string(b), `"approvals_per_active_hour":null`)
	}
	// Even a rule that asks for no decisions judges none.
	m := figures.ComputeWithRule(nil, figures.RubberStampRule{Rate: -1, Median: time.Hour})
	assert.False(t, m.Overall.RubberStamp)
	assert.Empty(t, m.Warnings)
}

func TestComputeByApprover(t *testing.T) {
	records := []audit.Record{
		rec("external", audit.DecisionNeedsApproval, "", 0, 0),
		rec("external", audit.DecisionApproved, "user:dana", time.Minute, 3000),
		rec("irreversible", audit.DecisionCosigned, "user:dana", 2*time.Hour+time.Minute, 9000),
		rec("external", audit.DecisionDenied, "user:dana", 3*time.Hour, 1000),
		rec("external", audit.DecisionDenied, "user:lee", time.Minute, 60000),
		rec("external", audit.DecisionExecuted, "user:dana", 4*time.Hour, 0),
		rec("external", audit.DecisionApproved, "", time.Minute, 1000),
	}
	m := figures.Compute(records)
	require.Len(t, m.ByApprover, 2, "executed rows and rows without an approver count for no one")
	dana := m.ByApprover["user:dana"]
	assert.Equal(t, 2, dana.Approvals, "a cosigned row is an approval")
	assert.Equal(t, 1, dana.Denials)
	assert.InDelta(t, 2.0/3.0, rate(t, dana.Decisions), 1e-12)
	assert.Equal(t, 3*time.Second, medianOf(t, dana.Decisions))
	assert.Equal(t, 9*time.Second, dana.Time.P90())
	assert.InDelta(t, 0.5, perHour(t, dana.Pace), 1e-9, "one gap of two hours")
	assert.Equal(t, 1, dana.PeakHour)
	lee := m.ByApprover["user:lee"]
	assert.InDelta(t, 0.0, rate(t, lee.Decisions), 0, "lee decided, and approved none")
	assert.Zero(t, lee.ActiveMillis, "lee approved nothing")
	assert.Nil(t, lee.ApprovalsPerActiveHour)
	assert.Equal(t, time.Minute, lee.Time.P90())
}

func TestComputeP90NearestRank(t *testing.T) {
	tests := []struct {
		seconds []int64
		p90     time.Duration
	}{
		{[]int64{7}, 7 * time.Second},
		{[]int64{1, 2}, 2 * time.Second},
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 9 * time.Second},
		{[]int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 11}, 10 * time.Second},
		{[]int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 600}, time.Second},
	}
	for _, tt := range tests {
		var records []audit.Record
		for _, s := range tt.seconds {
			records = append(records, rec("external", audit.DecisionApproved, "user:dana", 0, s*1000))
		}
		assert.Equal(t, tt.p90, figures.Compute(records).Overall.Time.P90(), "%v", tt.seconds)
	}
}

// decided returns approved approvals then denied denials, each decided in
// decision, by one approver in one class.
func decided(approved, denied int, decision time.Duration) []audit.Record {
	var out []audit.Record
	for i := range approved + denied {
		d := audit.DecisionApproved
		if i >= approved {
			d = audit.DecisionDenied
		}
		out = append(out, rec("external", d, "user:dana", time.Duration(i)*time.Minute, decision.Milliseconds()))
	}
	return out
}

func TestRubberStampBoundaries(t *testing.T) {
	tests := []struct {
		name             string
		approved, denied int
		decision         time.Duration
		trips            bool
	}{
		{"99.7% in 3 s", 997, 3, 3 * time.Second, true},
		{"all approved at once, 20 decisions", 20, 0, time.Second, true},
		{"19 decisions are too few", 19, 0, time.Second, false},
		{"two approvals are too few", 2, 0, 100 * time.Millisecond, false},
		{"exactly 95% is not over it", 19, 1, time.Second, false},
		{"just over 95%", 39, 1, time.Second, true},
		{"a median of exactly 5 s is not under it", 20, 0, 5 * time.Second, false},
		{"a median just under 5 s", 20, 0, 4999 * time.Millisecond, true},
		{"slow and careful", 1000, 0, time.Minute, false},
		{"quick but denying", 50, 50, time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := figures.Compute(decided(tt.approved, tt.denied, tt.decision))
			for scope, c := range map[string]figures.Decisions{"all": m.Overall.Decisions, "class": m.ByClass["external"].Decisions, "approver": m.ByApprover["user:dana"].Decisions} {
				assert.Equal(t, tt.trips, c.RubberStamp, scope)
				assert.Equal(t, tt.trips, figures.DefaultRubberStampRule().Trips(c), scope)
			}
			if !tt.trips {
				assert.Empty(t, m.Warnings)
				return
			}
			require.Len(t, m.Warnings, 3)
			assert.Contains(t, m.Warnings[0], "all: ")
			assert.Contains(t, m.Warnings[1], `class "external": `)
			assert.Contains(t, m.Warnings[2], `approver "user:dana": `)
			assert.Contains(t, m.Warnings[0], fmt.Sprintf("over %d decisions", tt.approved+tt.denied))
			assert.Contains(t, m.Warnings[0], "rubber-stamped (rule: over 95.0% approved, median under 5s, at least 20 decisions)")
		})
	}
}

func TestComputeWithRule(t *testing.T) {
	two := decided(2, 0, time.Second)
	assert.Empty(t, figures.Compute(two).Warnings, "two approvals do not trip the default rule")
	strict := figures.RubberStampRule{Rate: 0.5, Median: 10 * time.Second, MinDecisions: 2}
	m := figures.ComputeWithRule(two, strict)
	assert.Equal(t, strict, m.Rule)
	assert.True(t, m.Overall.RubberStamp)
	assert.Len(t, m.Warnings, 3)
	assert.False(t, figures.ComputeWithRule(decided(1, 0, time.Second), strict).Overall.RubberStamp)
}

// TestReportJSONShape holds the JSON a dashboard reads to one exact
// document: a change of a name or a unit breaks this test, not a
// dashboard.
func TestReportJSONShape(t *testing.T) {
	records := []audit.Record{
		rec("external", audit.DecisionNeedsApproval, "", 0, 0),
		rec("external", audit.DecisionApproved, "user:dana", time.Minute, 3000),
		rec("external", audit.DecisionApproved, "user:dana", 31*time.Minute, 5000),
		rec("external", audit.DecisionExpired, "", 40*time.Minute, 0),
		rec("read", audit.DecisionAllow, "", 41*time.Minute, 0),
	}
	b, err := json.MarshalIndent(figures.Compute(records), "", "  ")
	require.NoError(t, err)
	from, to, start := chainStart.UnixMilli(), chainStart.Add(41*time.Minute).UnixMilli(), chainStart.Add(time.Minute).UnixMilli()
	ext := `{
      "asked": 1,
      "approvals": 2,
      "denials": 0, "wrong_picks": 0,
      "approval_rate": 1,
      "decision_time": {
        "median_ms": 4000,
        "p90_ms": 5000
      },
      "rubber_stamp": false, "catch": null,
      "lapsed": 1,
      "reviewers": 1,
      "active_ms": 1800000,
      "approvals_per_active_hour": 2,
      "peak_hour": 2
    }`
	want := fmt.Sprintf(`{
  "window": {
    "from": %d,
    "to": %d,
    "records": 5
  },
  "overall": %s,
  "by_class": {
    "external": %s,
    "read": {
      "asked": 0,
      "approvals": 0,
      "denials": 0, "wrong_picks": 0,
      "approval_rate": null,
      "decision_time": null,
      "rubber_stamp": false, "catch": null,
      "lapsed": 0,
      "reviewers": 0,
      "active_ms": 0,
      "approvals_per_active_hour": null,
      "peak_hour": 0
    }
  },
  "by_approver": {
    "user:dana": {
      "approvals": 2,
      "denials": 0, "wrong_picks": 0,
      "approval_rate": 1,
      "decision_time": {
        "median_ms": 4000,
        "p90_ms": 5000
      },
      "rubber_stamp": false, "catch": null,
      "active_ms": 1800000,
      "approvals_per_active_hour": 2,
      "peak_hour": 2,
      "catch_by_class": {}
    }
  },
  "peak_hour": {
    "start": %d,
    "approvals": 2
  },
  "rubber_stamp_rule": {
    "rate_above": 0.95,
    "median_below_ns": 5000000000,
    "min_decisions": 20,
    "catch_floor": 0.5
  },
  "warnings": []
}`, from, to, strings.ReplaceAll(ext, "\n    ", "\n  "), ext, start)
	assert.JSONEq(t, want, string(b))
	// The approver's row has no column that counts something else.
	var doc struct {
		ByApprover map[string]map[string]any `json:"by_approver"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, col := range []string{"asked", "lapsed", "reviewers", "requests"} {
		assert.NotContains(t, doc.ByApprover["user:dana"], col)
	}
}

func TestComputeForgedTimesDoNotOverflow(t *testing.T) {
	const huge = int64(1<<63 - 1)
	records := []audit.Record{
		{EffectClass: "x", Decision: audit.DecisionApproved, Approver: "user:a", Time: -huge - 1, DecisionMillis: huge},
		{EffectClass: "x", Decision: audit.DecisionApproved, Approver: "user:a", Time: huge, DecisionMillis: huge},
		{EffectClass: "x", Decision: audit.DecisionDenied, Approver: "user:a", Time: 0, DecisionMillis: -huge - 1},
	}
	c := figures.Compute(records).Overall
	assert.Equal(t, 1, c.PeakHour, "the two approvals are ages apart")
	assert.Equal(t, time.Duration(huge), c.Time.Median(), "saturated, not wrapped")
	assert.Equal(t, time.Duration(huge), c.Time.P90())
	assert.Equal(t, int64(huge), c.ActiveMillis, "saturated, not wrapped")
	assert.Greater(t, perHour(t, c.Pace), 0.0)
}

// TestCatchRates: practice requests caught (denied) and missed (approved)
// make each approver's and each class's catch rate, with a Wilson interval
// that holds the true rate; an approver whose whole interval lies below
// the floor is warned of, one with too few requests to tell is not; and a
// practice request is no decision (it moves no approval rate).
func TestCatchRates(t *testing.T) {
	var records []audit.Record
	at := time.Duration(0)
	add := func(class, kind, who string, n int) {
		for range n {
			at += time.Minute
			records = append(records, rec(class, kind, who, at, 4000))
		}
	}
	add("external", audit.DecisionPracticeCaught, "user:dana", 18)
	add("external", audit.DecisionPracticeMissed, "user:dana", 2)
	add("external", audit.DecisionPracticeMissed, "user:erin", 19)
	add("external", audit.DecisionPracticeCaught, "user:erin", 1)
	add("irreversible", audit.DecisionPracticeMissed, "user:finn", 2)
	r := figures.Compute(records)
	dana, erin, finn := r.ByApprover["user:dana"].Catch, r.ByApprover["user:erin"].Catch, r.ByApprover["user:finn"].Catch
	require.NotNil(t, dana)
	assert.Equal(t, 18, dana.Caught)
	assert.InDelta(t, 0.9, dana.Rate, 1e-9)
	assert.Less(t, dana.Low, 0.9)
	assert.Greater(t, dana.High, 0.9)
	assert.InDelta(t, 0.699, dana.Low, 0.01, "the Wilson interval of 18 of 20")
	require.NotNil(t, erin)
	assert.Less(t, erin.High, figures.DefaultCatchFloor)
	require.NotNil(t, finn)
	assert.Greater(t, finn.High, figures.DefaultCatchFloor, "two misses are too few to tell")
	warned := strings.Join(r.Warnings, "\n")
	assert.Contains(t, warned, `approver "user:erin": caught 1 of 20 practice requests`)
	assert.NotContains(t, warned, "user:dana")
	assert.NotContains(t, warned, "user:finn")
	assert.Equal(t, 19, r.ByClass["external"].Catch.Caught)
	assert.Nil(t, r.Overall.ApprovalRate, "a practice request is no decision")
	for _, n := range []int{1, 3, 10, 100} {
		for caught := 0; caught <= n; caught++ {
			var rs []audit.Record
			for i := range n {
				kind := audit.DecisionPracticeMissed
				if i < caught {
					kind = audit.DecisionPracticeCaught
				}
				rs = append(rs, rec("external", kind, "user:x", time.Duration(i)*time.Minute, 1000))
			}
			c := figures.Compute(rs).ByApprover["user:x"].Catch
			require.NotNil(t, c)
			assert.LessOrEqual(t, c.Low, c.Rate, "%d of %d", caught, n)
			assert.GreaterOrEqual(t, c.High, c.Rate, "%d of %d", caught, n)
			assert.True(t, c.Low >= 0 && c.High <= 1, "%d of %d", caught, n)
		}
	}
}

// TestCatchRatesByClassOfEachApprover: an approver's catch rate is also
// kept per effect class, and the classes add up to the approver's own
// rate, so one who catches on one class and misses on another is told
// apart from one who catches half on both.
func TestCatchRatesByClassOfEachApprover(t *testing.T) {
	for seed := range 50 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		var records []audit.Record
		want := map[string]map[string][2]int{}
		for i := range 1 + rng.IntN(80) {
			who := []string{"user:dana", "user:erin", "user:finn"}[rng.IntN(3)]
			class := []string{"external", "irreversible", "internal"}[rng.IntN(3)]
			kind, k := audit.DecisionPracticeCaught, 0
			if rng.IntN(2) == 0 {
				kind, k = audit.DecisionPracticeMissed, 1
			}
			records = append(records, rec(class, kind, who, time.Duration(i)*time.Minute, 3000))
			if want[who] == nil {
				want[who] = map[string][2]int{}
			}
			n := want[who][class]
			n[k]++
			want[who][class] = n
		}
		r := figures.Compute(records)
		for who, classes := range want {
			a := r.ByApprover[who]
			require.Len(t, a.CatchByClass, len(classes), "seed %d %s", seed, who)
			caught, missed := 0, 0
			for class, n := range classes {
				c := a.CatchByClass[class]
				assert.Equal(t, n[0], c.Caught, "seed %d %s %s", seed, who, class)
				assert.Equal(t, n[1], c.Missed, "seed %d %s %s", seed, who, class)
				assert.LessOrEqual(t, c.Low, c.Rate)
				assert.GreaterOrEqual(t, c.High, c.Rate)
				caught, missed = caught+n[0], missed+n[1]
			}
			require.NotNil(t, a.Catch)
			assert.Equal(t, caught, a.Catch.Caught, "seed %d %s", seed, who)
			assert.Equal(t, missed, a.Catch.Missed, "seed %d %s", seed, who)
		}
	}
}
