package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/flood"
)

// goal is the pessimistic scenario of the issue, over a short shift with
// a heavier attacker so that a few runs tell the configurations apart:
// rested miss 0.15, correlation 0.8, disguised requests spread over 4
// agents.
func goal() Scenario {
	sc := short()
	sc.Approver.RestedMiss, sc.Approver.Correlation = 0.15, 0.8
	sc.Attack.Rate, sc.Attack.Disguise, sc.Attack.Spread, sc.Attack.Scope = 8, true, 4, flood.ScopeAgent
	return sc
}

// TestEachControlBites: with the others on, switching each control off
// makes the figure it works on worse. The flood and target limits and
// the first contact's second approver work on what executes; practice
// requests and active confirmation on the catch rate of each decision;
// the dwell on a hurried approver's.
func TestEachControlBites(t *testing.T) {
	hurried := goal()
	hurried.Approver.UnloadedMedian, hurried.Approver.FloorMedian = 2*time.Second, time.Second
	tests := []struct {
		control string
		sc      Scenario
		catch   bool // compare the per-decision catch rate, not executions
	}{
		{"flood", goal(), false},
		{"targets", goal(), false},
		{"first-contact approver", goal(), false},
		{"practice", goal(), true},
		{"confirm", goal(), true},
		{"dwell", hurried, true},
	}
	for _, tt := range tests {
		t.Run(tt.control, func(t *testing.T) {
			on := AllControls()
			if tt.control == "dwell" {
				on.Dwell = 10 * time.Second // longer than a hurried pick
			}
			off := Without(on, tt.control)
			assert.NotEqual(t, on, off)
			with := runOK(t, tt.sc, on, 60, 24)
			without := runOK(t, tt.sc, off, 60, 24)
			if tt.catch {
				t.Logf("catch: on %.3f, off %.3f", with.MaliciousCatch.P, without.MaliciousCatch.P)
				assert.Greater(t, with.MaliciousCatch.P, without.MaliciousCatch.P+0.02)
				return
			}
			t.Logf("executed per shift: on %.3f, off %.3f", with.MaliciousExecuted.Mean, without.MaliciousExecuted.Mean)
			assert.Less(t, with.MaliciousExecuted.Mean, without.MaliciousExecuted.Mean)
			assert.LessOrEqual(t, with.AttackSuccess.P, without.AttackSuccess.P)
		})
	}
}

// TestPracticeMeasuresCatch: practice cards are decided as attacks are,
// so the catch rate measured on them estimates the true one.
func TestPracticeMeasuresCatch(t *testing.T) {
	sc := goal()
	sc.Attack.Rate = 20
	c := Controls{Approvals: 1, Practice: 0.3}
	r := runOK(t, sc, c, 40, 5)
	assert.Greater(t, r.PracticeCards.Mean, 5.0)
	assert.Greater(t, r.PracticeCatch.Trials, 200)
	assert.InDelta(t, r.MaliciousCatch.P, r.PracticeCatch.P, 0.06,
		"practice %+v, true %+v", r.PracticeCatch, r.MaliciousCatch)
	// Practice never executes: without an attacker nothing does.
	sc.Attack.Rate = 0
	r = runOK(t, sc, c, 20, 5)
	assert.Zero(t, r.AttackSuccess.Successes)
	assert.Greater(t, r.PracticeCatch.Trials, 0)
}

// TestInflowCreditedOnce: the approver's pace is set by the demand on the
// desk, offered when a request arrives, whether flood control lets it
// through or not, so an inflow cap refuses cards but does not also slow
// the modelled reading. Approvers who see first contacts only are
// offered those; practice cards are offered to the primary approvers.
func TestInflowCreditedOnce(t *testing.T) {
	s := &shift{primary: 1, approvers: make([]approverState, 2), reqs: []request{
		{}, {fresh: true}, {practice: true}, {malicious: true, fresh: true},
	}}
	for n := range s.reqs {
		s.offer(n)
	}
	assert.Len(t, s.approvers[0].arrivals, 4)
	assert.Len(t, s.approvers[1].arrivals, 2)
	// show counts the prompt, never the load.
	s.sc, s.ctl = DefaultScenario(), Controls{Approvals: 1}
	s.sc.Attack.Rate = 0
	before := len(s.approvers[0].arrivals)
	s.approvers[0].busy = true
	assert.NoError(t, s.show(0, false))
	assert.Len(t, s.approvers[0].arrivals, before)
	assert.Equal(t, 1, s.out.prompts)
}

func TestApproverAids(t *testing.T) {
	a := DefaultApprover()
	a.RestedMiss = 0.15
	for _, spent := range []time.Duration{time.Second, 3 * time.Second, time.Minute} {
		for _, onShift := range []time.Duration{0, time.Hour, 8 * time.Hour} {
			none := a.catch(spent, onShift, aids{})
			assert.Greater(t, a.catch(spent, onShift, aids{practice: true}), none, "practice")
			assert.GreaterOrEqual(t, a.catch(spent, onShift, aids{confirm: true}), none, "confirm")
		}
	}
	// Unread, a pick is right by chance only: catch is (1 - miss)(1 - 1/k).
	assert.InDelta(t, (1-0.15)*(1-1.0/float64(a.ConfirmOptions)), a.catch(0, 0, aids{confirm: true}), 1e-12)
}
