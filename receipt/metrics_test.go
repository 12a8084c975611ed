package receipt_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
)

func rec(class, decision, approver string, at time.Duration, decisionMillis int64) receipt.AuditRecord {
	return receipt.AuditRecord{EffectClass: class, Decision: decision, Approver: approver,
		Time: chainStart.Add(at).UnixMilli(), DecisionMillis: decisionMillis}
}

func TestMetrics(t *testing.T) {
	records := []receipt.AuditRecord{
		rec("external", receipt.DecisionNeedsApproval, "", 0, 0),
		rec("external", receipt.DecisionApproved, "dana", time.Minute, 3000),
		rec("external", receipt.DecisionNeedsApproval, "", 2*time.Minute, 0),
		rec("external", receipt.DecisionApproved, "dana", 3*time.Minute, 2000),
		rec("external", receipt.DecisionNeedsApproval, "", 4*time.Minute, 0),
		rec("external", receipt.DecisionApproved, "dana", 5*time.Minute, 4000),
		rec("external", receipt.DecisionNeedsApproval, "", 6*time.Minute, 0),
		rec("external", receipt.DecisionDenied, "lee", 7*time.Minute, 60000),
		rec("irreversible", receipt.DecisionNeedsApproval, "", 0, 0),
		rec("irreversible", receipt.DecisionApproved, "lee", 3*time.Hour, 90000),
		rec("irreversible", receipt.DecisionNeedsApproval, "", 0, 0),
		rec("irreversible", receipt.DecisionExpired, "", 20*time.Minute, 0),
		rec("read", receipt.DecisionAllow, "", 0, 0),
	}
	m := receipt.Metrics(records)

	ext := m.ByClass["external"]
	assert.Equal(t, 4, ext.Requests)
	assert.Equal(t, 3, ext.Approved)
	assert.Equal(t, 1, ext.Denied)
	assert.InDelta(t, 0.75, ext.ApprovalRate, 1e-9)
	assert.Equal(t, 3500*time.Millisecond, ext.MedianDecision, "median of 2, 3, 4 and 60 seconds")
	assert.Equal(t, 1, ext.Reviewers)
	assert.InDelta(t, 3.0, ext.ApprovalsPerReviewerHour, 1e-9, "three approvals within one counted hour")
	assert.Equal(t, 3, ext.PeakReviewerHour)

	irr := m.ByClass["irreversible"]
	assert.Equal(t, 2, irr.Requests)
	assert.Equal(t, 1, irr.Expired)
	assert.InDelta(t, 1.0, irr.ApprovalRate, 1e-9)
	assert.Equal(t, 90*time.Second, irr.MedianDecision)

	read := m.ByClass["read"]
	assert.Zero(t, read.ApprovalRate, "no decisions, no rate")
	assert.Zero(t, read.MedianDecision)

	all := m.Overall
	assert.Equal(t, 6, all.Requests)
	assert.Equal(t, 4, all.Approved)
	assert.InDelta(t, 0.8, all.ApprovalRate, 1e-9)
	assert.Equal(t, 4*time.Second, all.MedianDecision, "median of 2, 3, 4, 60 and 90 seconds")
	assert.Equal(t, 2, all.Reviewers)
	assert.InDelta(t, 2.0, all.ApprovalsPerReviewerHour, 1e-9, "dana 3 in 1 hour, lee 1 in 1 hour")
}

func TestMetricsPeakUsesSlidingHour(t *testing.T) {
	var records []receipt.AuditRecord
	// 30 approvals a minute apart, then one two hours later.
	for i := range 30 {
		records = append(records, rec("external", receipt.DecisionApproved, "dana", time.Duration(i)*time.Minute, 1000))
	}
	records = append(records, rec("external", receipt.DecisionApproved, "dana", 3*time.Hour, 1000))
	m := receipt.Metrics(records).Overall
	assert.Equal(t, 30, m.PeakReviewerHour)
	assert.InDelta(t, 31.0/3.0, m.ApprovalsPerReviewerHour, 1e-9)
	assert.Equal(t, 1.0, m.ApprovalRate, "fatigue shows as a rate of 1 and one-second decisions")
	assert.Equal(t, time.Second, m.MedianDecision)
}

func TestMetricsEmpty(t *testing.T) {
	for _, records := range [][]receipt.AuditRecord{nil, {}} {
		m := receipt.Metrics(records)
		assert.Zero(t, m.Overall)
		assert.Empty(t, m.ByClass)
		assert.Empty(t, m.ByApprover)
		assert.Empty(t, m.Warnings)
		assert.Equal(t, receipt.DefaultRubberStampRule(), m.Rule)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"warnings":[]`, "an empty list, not null")
	}
	// Even a rule that asks for no decisions judges none.
	m := receipt.MetricsWithRule(nil, receipt.RubberStampRule{Rate: -1, Median: time.Hour})
	assert.False(t, m.Overall.RubberStamp)
	assert.Empty(t, m.Warnings)
}

func TestMetricsByApprover(t *testing.T) {
	records := []receipt.AuditRecord{
		rec("external", receipt.DecisionNeedsApproval, "", 0, 0),
		rec("external", receipt.DecisionApproved, "user:dana", time.Minute, 3000),
		rec("irreversible", receipt.DecisionApproved, "user:dana", 2*time.Hour+time.Minute, 9000),
		rec("external", receipt.DecisionDenied, "user:dana", 3*time.Hour, 1000),
		rec("external", receipt.DecisionDenied, "user:lee", time.Minute, 60000),
		rec("external", receipt.DecisionExecuted, "user:dana", 4*time.Hour, 0),
		rec("external", receipt.DecisionApproved, "", time.Minute, 1000),
	}
	m := receipt.Metrics(records)
	require.Len(t, m.ByApprover, 2, "executed rows and rows without an approver count for no one")
	dana := m.ByApprover["user:dana"]
	assert.Equal(t, 2, dana.Approved)
	assert.Equal(t, 1, dana.Denied)
	assert.Zero(t, dana.Requests)
	assert.InDelta(t, 2.0/3.0, dana.ApprovalRate, 1e-12)
	assert.Equal(t, 3*time.Second, dana.MedianDecision)
	assert.Equal(t, 9*time.Second, dana.P90Decision)
	assert.Equal(t, 1, dana.Reviewers)
	assert.InDelta(t, 1.0, dana.ApprovalsPerReviewerHour, 1e-9, "two approvals two hours apart")
	assert.Equal(t, 1, dana.PeakReviewerHour)
	lee := m.ByApprover["user:lee"]
	assert.Zero(t, lee.ApprovalRate)
	assert.Zero(t, lee.Reviewers, "lee approved nothing")
	assert.Equal(t, time.Minute, lee.P90Decision)
}

func TestMetricsP90NearestRank(t *testing.T) {
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
		var records []receipt.AuditRecord
		for _, s := range tt.seconds {
			records = append(records, rec("external", receipt.DecisionApproved, "user:dana", 0, s*1000))
		}
		assert.Equal(t, tt.p90, receipt.Metrics(records).Overall.P90Decision, "%v", tt.seconds)
	}
}

// decided returns approved approvals then denied denials, each decided in
// decision, by one approver in one class.
func decided(approved, denied int, decision time.Duration) []receipt.AuditRecord {
	var out []receipt.AuditRecord
	for i := range approved + denied {
		d := receipt.DecisionApproved
		if i >= approved {
			d = receipt.DecisionDenied
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
			m := receipt.Metrics(decided(tt.approved, tt.denied, tt.decision))
			for scope, c := range map[string]receipt.ClassMetrics{"all": m.Overall, "class": m.ByClass["external"], "approver": m.ByApprover["user:dana"]} {
				assert.Equal(t, tt.trips, c.RubberStamp, scope)
				assert.Equal(t, tt.trips, receipt.DefaultRubberStampRule().Trips(c), scope)
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

func TestMetricsWithRule(t *testing.T) {
	two := decided(2, 0, time.Second)
	assert.Empty(t, receipt.Metrics(two).Warnings, "two approvals do not trip the default rule")
	strict := receipt.RubberStampRule{Rate: 0.5, Median: 10 * time.Second, MinDecisions: 2}
	m := receipt.MetricsWithRule(two, strict)
	assert.Equal(t, strict, m.Rule)
	assert.True(t, m.Overall.RubberStamp)
	assert.Len(t, m.Warnings, 3)
	assert.False(t, receipt.MetricsWithRule(decided(1, 0, time.Second), strict).Overall.RubberStamp)
}

func TestMetricsJSONNames(t *testing.T) {
	b, err := json.Marshal(receipt.Metrics(decided(20, 0, time.Second)))
	require.NoError(t, err)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, key := range []string{"overall", "by_class", "by_approver", "rubber_stamp_rule", "warnings"} {
		assert.Contains(t, doc, key)
	}
	var overall, rule map[string]any
	require.NoError(t, json.Unmarshal(doc["overall"], &overall))
	require.NoError(t, json.Unmarshal(doc["rubber_stamp_rule"], &rule))
	assert.Equal(t, 1e9, overall["median_decision_ns"])
	assert.Equal(t, 1e9, overall["p90_decision_ns"])
	assert.Equal(t, true, overall["rubber_stamp"])
	assert.Equal(t, map[string]any{"rate_above": 0.95, "median_below_ns": 5e9, "min_decisions": 20.0}, rule)
}

func TestMetricsForgedTimesDoNotOverflow(t *testing.T) {
	const huge = int64(1<<63 - 1)
	records := []receipt.AuditRecord{
		{EffectClass: "x", Decision: receipt.DecisionApproved, Approver: "user:a", Time: -huge - 1, DecisionMillis: huge},
		{EffectClass: "x", Decision: receipt.DecisionApproved, Approver: "user:a", Time: huge, DecisionMillis: huge},
		{EffectClass: "x", Decision: receipt.DecisionDenied, Approver: "user:a", Time: 0, DecisionMillis: -huge - 1},
	}
	c := receipt.Metrics(records).Overall
	assert.Equal(t, 1, c.PeakReviewerHour, "the two approvals are ages apart")
	assert.Equal(t, time.Duration(huge), c.MedianDecision, "saturated, not wrapped")
	assert.Equal(t, time.Duration(huge), c.P90Decision)
	assert.Greater(t, c.ApprovalsPerReviewerHour, 0.0)
}
