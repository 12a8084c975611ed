package receipt_test

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/receipt"
)

// approvals returns n approvals by approver, a minute apart, each decided
// in decision.
func approvals(n int, approver, class string, decision time.Duration) []receipt.AuditRecord {
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	out := make([]receipt.AuditRecord, n)
	for i := range out {
		out[i] = receipt.AuditRecord{Time: start.Add(time.Duration(i) * time.Minute).UnixMilli(),
			EffectClass: class, Decision: receipt.DecisionApproved, Approver: approver,
			DecisionMillis: decision.Milliseconds()}
	}
	return out
}

// A reviewer who approves everything within two seconds trips the
// rubber-stamp rule; one who takes a minute does not.
func ExampleMetrics_rubberStamp() {
	records := append(approvals(30, "user:dana", "external", 2*time.Second),
		approvals(30, "user:lee", "irreversible", time.Minute)...)
	m := receipt.Metrics(records)
	for _, who := range []string{"user:dana", "user:lee"} {
		a := m.ByApprover[who]
		fmt.Printf("%s: rate %.0f%%, median %s, p90 %s, %.0f per reviewer-hour, rubber stamp %t\n",
			who, 100*a.ApprovalRate, a.MedianDecision, a.P90Decision, a.ApprovalsPerReviewerHour, a.RubberStamp)
	}
	for _, w := range m.Warnings {
		fmt.Println(w)
	}
	// Output:
	// user:dana: rate 100%, median 2s, p90 2s, 30 per reviewer-hour, rubber stamp true
	// user:lee: rate 100%, median 1m0s, p90 1m0s, 30 per reviewer-hour, rubber stamp false
	// class "external": 100.0% approved over 30 decisions, median decision 2s: approvals look rubber-stamped (rule: over 95.0% approved, median under 5s, at least 20 decisions)
	// approver "user:dana": 100.0% approved over 30 decisions, median decision 2s: approvals look rubber-stamped (rule: over 95.0% approved, median under 5s, at least 20 decisions)
}

// A stricter rule judges a small team's few decisions too.
func ExampleMetricsWithRule() {
	rule := receipt.DefaultRubberStampRule()
	rule.MinDecisions = 5
	rule.Median = 10 * time.Second
	m := receipt.MetricsWithRule(approvals(6, "user:dana", "external", 8*time.Second), rule)
	fmt.Println(m.Overall.RubberStamp, len(m.Warnings))
	fmt.Println(receipt.Metrics(approvals(6, "user:dana", "external", 8*time.Second)).Overall.RubberStamp)
	// Output:
	// true 3
	// false
}

func ExampleRubberStampRule_Trips() {
	rule := receipt.DefaultRubberStampRule()
	// 99.7% approved with a median decision of 3 seconds: nobody is reading.
	c := receipt.ClassMetrics{Approved: 997, Denied: 3, ApprovalRate: 0.997, MedianDecision: 3 * time.Second}
	fmt.Println(rule.Trips(c))
	// Output: true
}

func ExampleClassMetrics_Decisions() {
	c := receipt.ClassMetrics{Requests: 12, Approved: 9, Denied: 1, Expired: 2}
	fmt.Println(c.Decisions())
	// Output: 10
}
