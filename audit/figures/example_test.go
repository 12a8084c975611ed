package figures_test

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
)

// approvals returns n approvals by approver, a minute apart, each decided
// in decision.
func approvals(n int, approver, class string, decision time.Duration) []audit.Record {
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	out := make([]audit.Record, n)
	for i := range out {
		out[i] = audit.Record{Time: start.Add(time.Duration(i) * time.Minute).UnixMilli(),
			EffectClass: class, Decision: audit.DecisionApproved, Approver: approver,
			DecisionMillis: decision.Milliseconds()}
	}
	return out
}

// A reviewer who approves everything within two seconds trips the
// rubber-stamp rule; one who takes a minute does not.
func ExampleCompute_rubberStamp() {
	records := append(approvals(30, "user:dana", "external", 2*time.Second),
		approvals(30, "user:lee", "irreversible", time.Minute)...)
	m := figures.Compute(records)
	for _, who := range []string{"user:dana", "user:lee"} {
		a := m.ByApprover[who]
		fmt.Printf("%s: rate %.0f%%, median %s, p90 %s, %.0f per active hour, rubber stamp %t\n",
			who, 100**a.ApprovalRate, a.Time.Median(), a.Time.P90(), *a.ApprovalsPerActiveHour, a.RubberStamp)
	}
	for _, w := range m.Warnings {
		fmt.Println(w)
	}
	// Output:
	// user:dana: rate 100%, median 2s, p90 2s, 60 per active hour, rubber stamp true
	// user:lee: rate 100%, median 1m0s, p90 1m0s, 60 per active hour, rubber stamp false
	// class "external": 100.0% approved over 30 decisions, median decision 2s: approvals look rubber-stamped (rule: over 95.0% approved, median under 5s, at least 20 decisions)
	// approver "user:dana": 100.0% approved over 30 decisions, median decision 2s: approvals look rubber-stamped (rule: over 95.0% approved, median under 5s, at least 20 decisions)
}

// With no decisions there is no rate and no decision time to show: the
// figures are nil, and a page says "no decisions yet".
func ExampleCompute_noDecisions() {
	m := figures.Compute([]audit.Record{{EffectClass: "external", Decision: audit.DecisionNeedsApproval}})
	c := m.ByClass["external"]
	if c.ApprovalRate == nil || c.Time == nil {
		fmt.Printf("asked %d: no decisions yet\n", c.Asked)
	}
	// Output: asked 1: no decisions yet
}

// A stricter rule judges a small team's few decisions too.
func ExampleComputeWithRule() {
	rule := figures.DefaultRubberStampRule()
	rule.MinDecisions = 5
	rule.Median = 10 * time.Second
	m := figures.ComputeWithRule(approvals(6, "user:dana", "external", 8*time.Second), rule)
	fmt.Println(m.Overall.RubberStamp, len(m.Warnings))
	fmt.Println(figures.Compute(approvals(6, "user:dana", "external", 8*time.Second)).Overall.RubberStamp)
	// Output:
	// true 3
	// false
}

func ExampleRubberStampRule_Trips() {
	rule := figures.DefaultRubberStampRule()
	// 99.7% approved with a median decision of 3 seconds: nobody is reading.
	rate := 0.997
	d := figures.Decisions{Approvals: 997, Denials: 3, ApprovalRate: &rate, Time: &figures.DecisionTime{MedianMillis: 3000, P90Millis: 4000}}
	fmt.Println(rule.Trips(d))
	// Output: true
}

func ExampleDecisions_Decided() {
	c := figures.Class{Asked: 12, Decisions: figures.Decisions{Approvals: 9, Denials: 1}, Lapsed: 2}
	fmt.Println(c.Decided())
	// Output: 10
}

// A Tally counts records as a reader streams them, and gives the same
// figures as Compute over the same records.
func ExampleTally() {
	records := approvals(3, "user:dana", "external", 8*time.Second)
	var t figures.Tally
	for i := range records {
		t.Add(&records[i])
	}
	r := t.Report(figures.DefaultRubberStampRule())
	fmt.Println(r.Overall.Approvals, r.Window.Records, *r.Overall.ApprovalsPerActiveHour)
	// Output: 3 3 60
}
