package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
)

// fatigueChain: user:dana approves 30 external calls within 2 seconds
// each; user:lee decides 25 irreversible ones in a minute, denying 5.
func fatigueChain() []audit.Record {
	var out []audit.Record
	add := func(i int, class, decision, approver string, decided time.Duration) {
		at := approvedAt.Add(time.Duration(i) * time.Minute).UnixMilli()
		out = append(out,
			audit.Record{Time: at, Task: "t", EffectClass: class, Decision: audit.DecisionNeedsApproval},
			audit.Record{Time: at + decided.Milliseconds(), Task: "t", EffectClass: class, Decision: decision,
				Approver: approver, DecisionMillis: decided.Milliseconds()})
	}
	for i := range 30 {
		add(i, "external", audit.DecisionApproved, "user:dana", 2*time.Second)
	}
	for i := range 25 {
		d := audit.DecisionApproved
		if i%5 == 0 {
			d = audit.DecisionDenied
		}
		add(i, "irreversible", d, "user:lee", time.Minute+time.Duration(i)*time.Second)
	}
	return out
}

func TestAuditMetricsFatigue(t *testing.T) {
	file := writeRecords(t, fatigueChain())
	code, out, errOut := runCLI(approvedAt, "audit", file, "--metrics")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(out, "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line starts with %q in\n%s", prefix, out)
		return ""
	}
	assert.Contains(t, out, "approval figures (all, then by effect class; asked: calls put to a person, lapsed: expired or cancelled undecided):\n")
	assert.Contains(t, out, "busiest hour: 50 approvals from ", "dana's 30 and lee's 20 within one hour")
	ext := row("  external ")
	assert.Contains(t, ext, "asked   30  lapsed    0  approvals   30")
	assert.Contains(t, ext, "rate 100.0%")
	assert.Contains(t, ext, "median      2s  p90      2s")
	assert.True(t, strings.HasSuffix(ext, "RUBBER-STAMP"), ext)
	irr := row("  irreversible ")
	assert.Contains(t, irr, "rate  80.0%")
	assert.Contains(t, irr, "median   1m12s  p90   1m22s", "60 s + 0..24 s: median 72 s, nearest-rank p90 the 23rd, 82 s")
	assert.NotContains(t, irr, "RUBBER-STAMP")

	assert.Contains(t, out, "by approver (each person's own decisions):\n")
	dana := row("  user:dana ")
	assert.NotContains(t, dana, "asked", "no call is put to one approver")
	assert.Contains(t, dana, "active    29m0s  per active hour  60.0", "29 gaps in 29 minutes, as measured, not 30 in an hour rounded up")
	assert.Contains(t, dana, "approvals   30  denials    0")
	assert.True(t, strings.HasSuffix(dana, "RUBBER-STAMP"), dana)
	assert.NotContains(t, row("  user:lee "), "RUBBER-STAMP")

	assert.Contains(t, out, "warnings:\n")
	assert.Contains(t, out, `  class "external": 100.0% approved over 30 decisions, median decision 2s: approvals look rubber-stamped`)
	assert.Contains(t, out, `  approver "user:dana": 100.0% approved over 30 decisions`)
	assert.NotContains(t, out, `"user:lee":`)

	code, out, _ = runCLI(approvedAt, "audit", file, "--metrics", "--json")
	require.Equal(t, 0, code)
	var rep struct {
		Metrics struct {
			ByApprover map[string]struct {
				Approvals int `json:"approvals"`
				Time      struct {
					P90 int64 `json:"p90_ms"`
				} `json:"decision_time"`
				RubberStamp bool `json:"rubber_stamp"`
			} `json:"by_approver"`
			Warnings []string `json:"warnings"`
			Rule     struct {
				Rate         float64 `json:"rate_above"`
				MinDecisions int     `json:"min_decisions"`
			} `json:"rubber_stamp_rule"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.True(t, rep.Metrics.ByApprover["user:dana"].RubberStamp)
	assert.False(t, rep.Metrics.ByApprover["user:lee"].RubberStamp)
	assert.Equal(t, int64(82_000), rep.Metrics.ByApprover["user:lee"].Time.P90)
	assert.Equal(t, 30, rep.Metrics.ByApprover["user:dana"].Approvals)
	assert.Len(t, rep.Metrics.Warnings, 2)
	assert.Equal(t, 0.95, rep.Metrics.Rule.Rate)
	assert.Equal(t, 20, rep.Metrics.Rule.MinDecisions)
}

func TestAuditMetricsWithoutWarnings(t *testing.T) {
	code, out, _ := runCLI(approvedAt, "audit", writeChain(t, audittest.Chain(30, approvedAt)), "--metrics")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "by approver (each person's own decisions):\n  user:dana ")
	assert.Contains(t, out, "no rubber-stamp warnings (rule: over 95.0% approved, median under 5s, at least 20 decisions)\n")
	assert.NotContains(t, out, "RUBBER-STAMP")

	// A chain with no decision says so rather than a rate of 0%.
	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, audittest.Chain(2, approvedAt)), "--metrics")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "rate      -  median       -  p90       -")
	assert.NotContains(t, out, "0.0%")

	// An invalid chain gets no metrics.
	chain := audittest.Chain(30, approvedAt)
	chain[3].Decision = audit.DecisionApproved
	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, chain), "--metrics")
	assert.Equal(t, 1, code)
	assert.NotContains(t, out, "approval figures")
}
