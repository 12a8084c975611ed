package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
)

// FuzzConfig: whatever the numbers, Validate answers without panicking,
// and a configuration it accepts runs within its bounds with figures that
// make sense.
func FuzzConfig(f *testing.F) {
	f.Add(20.0, 4, 2.0, 4, 1, uint8(0), false, int64(5000), 2, int64(120), 0.02, 1.0, true, uint8(0xff), 1, 0.05)
	f.Add(0.0, 1, 60.0, 50, 8, uint8(2), true, int64(0), 1, int64(30), 0.5, 3.0, false, uint8(0), 3, 0.0)
	f.Add(-1.0, 0, 1e308, -3, 0, uint8(9), false, int64(-1), 0, int64(-5), 2.0, -1.0, true, uint8(0x5a), -2, 2.0)
	f.Fuzz(func(t *testing.T, benign float64, users int, attack float64, burst, spread int, scope uint8,
		disguise bool, dwellMs int64, approvals int, shiftMin int64, miss, sigma float64, withFlood bool,
		extras uint8, targets int, firstContact float64) {
		sc := DefaultScenario()
		sc.BenignRate, sc.BenignUsers = benign, users
		sc.Shift = time.Duration(shiftMin) * time.Minute
		sc.Attack = Attack{Rate: attack, Burst: burst, Spread: spread, Disguise: disguise,
			Scope: []flood.Scope{flood.ScopeSession, flood.ScopeAgent, flood.ScopeUser, flood.ScopeApprover}[scope%4]}
		sc.Attack.Targets, sc.BenignFirstContact = targets, firstContact
		sc.Approver.RestedMiss, sc.Approver.DecisionSpread = miss, sigma
		c := Config{Scenario: sc, Runs: 1, Seed: 1,
			Controls: Controls{Flood: withFlood, Dwell: time.Duration(dwellMs) * time.Millisecond, Approvals: approvals,
				Targets: extras&1 != 0, Confirm: extras&2 != 0, Practice: float64(extras>>2&3) * 0.1,
				FirstContactApprovals: int(extras >> 4)}}
		if c.Validate() != nil || sc.expectedRequests() > 300 {
			return
		}
		r, err := Run(context.Background(), c)
		if err != nil {
			require.ErrorIs(t, err, ErrBudget)
			return
		}
		require.LessOrEqual(t, r.AttackSuccess.Successes, 1)
		require.LessOrEqual(t, r.MaliciousExecuted.Mean, r.MaliciousCards.Mean)
		require.InDelta(t, r.MaliciousSent.Mean, r.MaliciousCards.Mean+r.MaliciousRefused.Mean+r.MaliciousMerged.Mean, 1e-9,
			"every request is shown, refused or merged")
		require.LessOrEqual(t, r.PracticeCatch.Successes, r.PracticeCatch.Trials)
		if c.Controls.Practice == 0 {
			require.Zero(t, r.PracticeCards.Mean)
		}
		if r.BenignDone.N > 0 {
			require.True(t, r.BenignDone.Mean >= 0 && r.BenignDone.Mean <= 1)
		}
	})
}
