package attackkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

func TestReportOutcomeByProperty(t *testing.T) {
	rep := attackkit.Report{Results: []attackkit.Result{
		{Property: attackkit.P1, Attack: "a", Outcome: attackkit.Held},
		{Property: attackkit.P1, Attack: "b", Outcome: attackkit.Skipped, Detail: "no hook"},
		{Property: attackkit.P2, Attack: "c", Outcome: attackkit.Held},
		{Property: attackkit.P2, Attack: "d", Outcome: attackkit.Broken, Detail: "ran X\nran Y"},
		{Property: attackkit.P5, Attack: "e", Outcome: attackkit.Skipped, Detail: "no receipts"},
	}}
	assert.Equal(t, attackkit.Held, rep.Outcome(attackkit.P1), "a skip does not hide a hold")
	assert.Equal(t, attackkit.Broken, rep.Outcome(attackkit.P2), "one broken attack breaks the property")
	assert.Equal(t, attackkit.Skipped, rep.Outcome(attackkit.P5))
	assert.Equal(t, attackkit.Skipped, rep.Outcome(attackkit.P7), "nothing tried")
	r, ok := rep.Result("d")
	assert.True(t, ok)
	assert.Equal(t, attackkit.Broken, r.Outcome)
	_, ok = rep.Result("z")
	assert.False(t, ok)
	assert.Len(t, rep.Broken(), 1)
	s := rep.String()
	assert.Contains(t, s, "P1 agent independence        held     1 of 2 attacks held\n")
	assert.Contains(t, s, "P2 effect binding            broken   1 of 2 attacks held\n")
	assert.Contains(t, s, "  broken: P2 effect binding / d: ran X\n", "first line of the finding")
	assert.NotContains(t, s, "ran Y")
	assert.Contains(t, s, "  skipped: P1 agent independence / b: no hook\n")
}

func TestPropertyNames(t *testing.T) {
	want := []string{"P1 agent independence", "P2 effect binding", "P3 freshness and single use",
		"P4 trusted rendering", "P5 non-repudiation", "P6 scope integrity", "P7 flood resistance"}
	for i, w := range want {
		assert.Equal(t, w, attackkit.Property(i+1).String())
	}
	assert.Equal(t, "P9", attackkit.Property(9).String())
}

// TestAdapterWithoutRuntimeBreaksEverything shows an incomplete adapter is
// reported, never passed.
func TestAdapterWithoutRuntimeBreaksEverything(t *testing.T) {
	rep := attackkit.Assess(t, func(testing.TB, *attackkit.Tools) attackkit.Target { return attackkit.Target{} })
	for _, r := range rep.Results {
		assert.Equal(t, attackkit.Broken, r.Outcome, r.Attack)
		assert.Contains(t, r.Detail, "without a Runtime or People", r.Attack)
	}
}

// panicky is a runtime that panics when asked to run anything.
type panicky struct{ refuser }

func (panicky) Propose(context.Context, stepup.Call) (stepup.Ticket, error) { panic("boom") }

// TestPanickingIntegrationIsBroken shows a panic in the integration is a
// finding of the attack it happened in, not a crash of the test.
func TestPanickingIntegrationIsBroken(t *testing.T) {
	rep := attackkit.Assess(t, func(testing.TB, *attackkit.Tools) attackkit.Target {
		return attackkit.Target{Runtime: panicky{}, People: refuser{}}
	})
	r, ok := rep.Result("replay of an executed approval")
	assert.True(t, ok)
	assert.Equal(t, attackkit.Broken, r.Outcome)
	assert.Contains(t, r.Detail, "the integration panicked: boom")
}
