package receipt_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
	m := receipt.Metrics(nil)
	assert.Zero(t, m.Overall)
	assert.Empty(t, m.ByClass)
}
