package gate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestAdminMetricsReadTheWindow: the figures count the decisions of the
// window by class and by approver, and nothing older.
func TestAdminMetricsReadTheWindow(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	decide := func(i int, approve bool) {
		tk, err := w.Gate.Propose(ctx, sendEmail(fmt.Sprintf("finance+%d@example.com", i)))
		require.NoError(t, err)
		w.Clock.Advance(4 * time.Second)
		if approve {
			_, err = w.Approve(tk.ID)
		} else {
			_, err = w.Deny(tk.ID, "no")
		}
		require.NoError(t, err)
	}
	decide(0, true) // a day before the window
	w.Clock.Advance(25 * time.Hour)
	decide(1, true)
	decide(2, true)
	decide(3, false)

	m, err := w.Gate.Admin().Metrics(ctx, 24*time.Hour)
	require.NoError(t, err)
	ext := m.ByClass["external"]
	assert.Equal(t, 3, ext.Asked)
	assert.Equal(t, 2, ext.Approvals)
	assert.Equal(t, 1, ext.Denials)
	assert.Equal(t, 2, m.ByApprover["user:dana"].Approvals)
	require.NotNil(t, ext.Time)
	assert.Equal(t, 4*time.Second, ext.Time.Median())

	all, err := w.Gate.Admin().Metrics(ctx, 0) // a week
	require.NoError(t, err)
	assert.Equal(t, 3, all.ByClass["external"].Approvals)

	for _, bad := range []time.Duration{-time.Second, gate.MaxMetricsWindow + time.Second} {
		_, err := w.Gate.Admin().Metrics(ctx, bad)
		assert.ErrorIs(t, err, stepup.ErrConfig)
	}
}

func ExampleAdmin_Metrics() {
	g, approver, clock := exampleGate()
	ctx := context.Background()
	for i := range 3 {
		tk, _ := g.Propose(ctx, exampleCall(fmt.Sprintf("finance+%d@example.com", i)))
		clock.Advance(2 * time.Second) // read, barely
		_, _ = stepuptest.Approve(ctx, g.Desk(), approver, tk.ID)
	}
	m, err := g.Admin().Metrics(ctx, 24*time.Hour)
	if err != nil {
		panic(err)
	}
	c := m.ByApprover["user:dana"]
	fmt.Println(c.Approvals, *c.ApprovalRate, c.Time.Median())
	// Output: 3 1 2s
}
