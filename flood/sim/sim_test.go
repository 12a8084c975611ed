package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
)

// short is the default scenario over a two-hour shift: enough for the
// properties, cheap enough for the race detector.
func short() Scenario {
	sc := DefaultScenario()
	sc.Shift = 2 * time.Hour
	return sc
}

func runOK(t *testing.T, sc Scenario, c Controls, runs int, seed uint64) Result {
	t.Helper()
	r, err := Run(context.Background(), Config{Scenario: sc, Controls: c, Runs: runs, Seed: seed})
	require.NoError(t, err)
	return r
}

func TestDeterministic(t *testing.T) {
	sc := short()
	sc.Attack.Rate, sc.Attack.Disguise = 10, true
	for _, n := range Ablation(AllControls()) {
		c := Config{Scenario: sc, Controls: n.Controls, Runs: 12, Seed: 42}
		one, err := run(context.Background(), c, 1)
		require.NoError(t, err)
		three, err := run(context.Background(), c, 3)
		require.NoError(t, err)
		again, err := Run(context.Background(), c)
		require.NoError(t, err)
		assert.Equal(t, one, three, "%s: the number of workers changes nothing", n.Name)
		assert.Equal(t, one, again, "%s: same seed, same result", n.Name)

		c.Seed = 43
		other, err := Run(context.Background(), c)
		require.NoError(t, err)
		assert.NotEqual(t, one.BenignMedianLatency, other.BenignMedianLatency, "%s: another seed, other draws", n.Name)
	}
}

// TestSameRequests: configurations run with one seed meet the same
// requests at the same times.
func TestSameRequests(t *testing.T) {
	var sent []float64
	for _, n := range Ablation(AllControls()) {
		sent = append(sent, runOK(t, short(), n.Controls, 20, 9).MaliciousSent.Mean)
	}
	for _, s := range sent[1:] {
		assert.Equal(t, sent[0], s)
	}
}

// genScenario draws a scenario for the property tests: a short shift,
// and an attacker of any shape.
func genScenario(rng *rand.Rand) Scenario {
	sc := short()
	sc.BenignRate = 5 + 35*rng.Float64()
	sc.BenignUsers = 1 + rng.IntN(6)
	sc.Attack = Attack{
		Rate:     2 + 40*rng.Float64(),
		Burst:    1 + rng.IntN(8),
		Disguise: rng.IntN(2) == 0,
		Spread:   1 + rng.IntN(4),
		Scope:    []flood.Scope{flood.ScopeSession, flood.ScopeAgent, flood.ScopeUser}[rng.IntN(3)],
	}
	return sc
}

// TestMoreControlNeverHelpsTheAttacker: over generated scenarios, a longer
// dwell and a rule of two never raise the attack's success, in
// expectation over many seeds (the estimate may tie, not rise beyond
// noise), with flood control off and on.
func TestMoreControlNeverHelpsTheAttacker(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	const runs = 100
	for i := range 5 {
		sc := genScenario(rng)
		base := Controls{Flood: i == 4, Approvals: 1}
		if base.Flood {
			// Flood control costs the store's work per request: a shorter
			// shift keeps the race detector quick.
			sc.Shift, sc.BenignRate = time.Hour, min(sc.BenignRate, 20)
		}
		name := fmt.Sprintf("scenario %d %+v flood %v", i, sc.Attack, base.Flood)
		t.Run(name, func(t *testing.T) {
			seed := rng.Uint64()
			none := runOK(t, sc, base, runs, seed)
			dwell, longer, two := base, base, base
			dwell.Dwell, longer.Dwell, two.Approvals = 5*time.Second, 30*time.Second, 2
			withDwell := runOK(t, sc, dwell, runs, seed)
			withLonger := runOK(t, sc, longer, runs, seed)
			withTwo := runOK(t, sc, two, runs, seed)

			t.Logf("success: none %.3f, dwell 5s %.3f, dwell 30s %.3f, rule of two %.3f",
				none.AttackSuccess.P, withDwell.AttackSuccess.P, withLonger.AttackSuccess.P, withTwo.AttackSuccess.P)
			// One run's outcome is 0 or 1: allow the noise of a few runs
			// flipping, never a real rise.
			const slack = 3.0 / runs
			assert.LessOrEqual(t, withDwell.AttackSuccess.P, none.AttackSuccess.P+slack, "dwell")
			assert.LessOrEqual(t, withLonger.AttackSuccess.P, withDwell.AttackSuccess.P+slack, "longer dwell")
			assert.LessOrEqual(t, withTwo.AttackSuccess.P, none.AttackSuccess.P+slack, "rule of two")
			assert.LessOrEqual(t, withLonger.MaliciousExecuted.Mean, none.MaliciousExecuted.Mean+slack, "longer dwell, executions")
			assert.LessOrEqual(t, withTwo.MaliciousExecuted.Mean, none.MaliciousExecuted.Mean+slack, "rule of two, executions")
			if none.AttackSuccess.P > 0.3 {
				assert.Less(t, withTwo.AttackSuccess.P, none.AttackSuccess.P, "a rule of two lowers a high success")
			}
		})
	}
}

// TestNoAttackerNoSuccess: without malicious requests no attack ever
// succeeds, whatever the controls.
func TestNoAttackerNoSuccess(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 4 {
		sc := genScenario(rng)
		sc.Attack.Rate = 0
		for _, n := range Ablation(AllControls()) {
			r := runOK(t, sc, n.Controls, 10, uint64(i))
			assert.Zero(t, r.AttackSuccess.Successes, n.Name)
			assert.Zero(t, r.MaliciousSent.Mean, n.Name)
			assert.Zero(t, r.MaliciousExecuted.Mean, n.Name)
			assert.Greater(t, r.BenignDone.Mean, 0.5, "%s: benign work gets done", n.Name)
		}
	}
}

// TestNaiveQueueCalibration holds the naive queue, under the default
// scenario, in seed 001's band: flooding succeeded 0.45 to 0.60 against
// the reference design with a modelled human approver.
func TestNaiveQueueCalibration(t *testing.T) {
	r := runOK(t, DefaultScenario(), NaiveQueue(), 1000, 1)
	t.Logf("naive queue: %.3f [%.3f, %.3f]", r.AttackSuccess.P, r.AttackSuccess.Lo, r.AttackSuccess.Hi)
	assert.GreaterOrEqual(t, r.AttackSuccess.P, 0.45)
	assert.LessOrEqual(t, r.AttackSuccess.P, 0.60)
	assert.Zero(t, r.MaliciousRefused.Mean, "the naive queue refuses nothing")
	assert.Equal(t, r.MaliciousSent.Mean, r.MaliciousCards.Mean, "the naive queue shows every request")
}

// TestFloodControlUsesFlood: with flood control on, identical copies from
// one session merge, a sustained attack is refused by flood's limits, and
// the prompts reaching an approver stay near flood's default inflow.
func TestFloodControlUsesFlood(t *testing.T) {
	sc := short()
	sc.Attack = Attack{Rate: 120, Burst: 10, Spread: 1, Scope: flood.ScopeSession}
	sc.Shift = time.Hour
	naive := runOK(t, sc, NaiveQueue(), 10, 3)
	limited := runOK(t, sc, Controls{Flood: true, Approvals: 1}, 10, 3)
	assert.Greater(t, limited.MaliciousMerged.Mean, 0.0)
	assert.Greater(t, limited.MaliciousRefused.Mean, 0.0)
	assert.Less(t, limited.MaliciousCards.Mean, naive.MaliciousCards.Mean/5)
	assert.Contains(t, limited.MaliciousRefusedBy, "rate/approver")
	// Inflow: 30 an hour, with the sliding estimate's slack.
	assert.Less(t, limited.PromptsPerApproverHour.Mean, 2*float64(flood.DefaultApproverInflow.N))
	assert.Greater(t, naive.PromptsPerApproverHour.Mean, 100.0)

	// Disguised copies do not merge.
	sc.Attack.Disguise = true
	disguised := runOK(t, sc, Controls{Flood: true, Approvals: 1}, 10, 3)
	assert.Zero(t, disguised.MaliciousMerged.Mean)

	// Limits turned off: only the pending caps and merging are left.
	off := flood.Limits{
		Session: flood.Rate{N: -1}, Agent: flood.Rate{N: -1}, User: flood.Rate{N: -1}, ApproverInflow: flood.Rate{N: -1},
		SessionLockout: flood.Lockout{After: -1}, AgentLockout: flood.Lockout{After: -1}, UserLockout: flood.Lockout{After: -1},
	}
	capsOnly := runOK(t, sc, Controls{Flood: true, Limits: off, Approvals: 1}, 10, 3)
	assert.Equal(t, []string{"pending cap"}, keys(capsOnly.MaliciousRefusedBy))
}

func keys(m map[string]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestConfigValidate(t *testing.T) {
	valid := Config{Scenario: DefaultScenario(), Controls: AllControls(), Runs: 10}
	require.NoError(t, valid.Validate())
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no runs", func(c *Config) { c.Runs = 0 }, "runs must be"},
		{"too many runs", func(c *Config) { c.Runs = MaxRuns + 1 }, "runs must be"},
		{"short shift", func(c *Config) { c.Scenario.Shift = time.Second }, "shift must be"},
		{"long shift", func(c *Config) { c.Scenario.Shift = 25 * time.Hour }, "shift must be"},
		{"negative benign rate", func(c *Config) { c.Scenario.BenignRate = -1 }, "benign rate"},
		{"NaN benign rate", func(c *Config) { c.Scenario.BenignRate = math.NaN() }, "benign rate"},
		{"no users", func(c *Config) { c.Scenario.BenignUsers = 0 }, "benign users"},
		{"TTL", func(c *Config) { c.Scenario.TTL = 0 }, "TTL"},
		{"infinite attack", func(c *Config) { c.Scenario.Attack.Rate = math.Inf(1) }, "attack rate"},
		{"empty burst", func(c *Config) { c.Scenario.Attack.Burst = 0 }, "burst"},
		{"no spread", func(c *Config) { c.Scenario.Attack.Spread = 0 }, "spread must be"},
		{"scope", func(c *Config) { c.Scenario.Attack.Scope = flood.ScopeApprover }, "spread scope"},
		{"approver", func(c *Config) { c.Scenario.Approver.ReadTau = -time.Second }, "read tau"},
		{"too many requests", func(c *Config) { c.Scenario.BenignRate = 10_000 }, "expects"},
		{"too much work", func(c *Config) { c.Runs, c.Scenario.BenignRate = MaxRuns, 1000 }, "in all"},
		{"no approvals", func(c *Config) { c.Controls.Approvals = 0 }, "approvals"},
		{"too many approvals", func(c *Config) { c.Controls.Approvals = MaxApprovals + 1 }, "approvals"},
		{"negative dwell", func(c *Config) { c.Controls.Dwell = -time.Second }, "dwell"},
		{"long dwell", func(c *Config) { c.Controls.Dwell = time.Hour }, "dwell"},
		{"limits", func(c *Config) { c.Controls.Limits.Session = flood.Rate{N: 0, Per: time.Minute} }, "session rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.edit(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
			_, err = Run(context.Background(), c)
			require.ErrorIs(t, err, ErrInvalid, "Run validates")
		})
	}
	// An attacker with no rate needs no strategy.
	c := valid
	c.Scenario.Attack = Attack{}
	require.NoError(t, c.Validate())
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Config{Scenario: DefaultScenario(), Controls: NaiveQueue(), Runs: 5000})
	require.ErrorIs(t, err, context.Canceled)
}

func TestBudget(t *testing.T) {
	// Within the validated bounds a run never reaches the budget; the
	// check itself is exercised on a shift that starts over it.
	s := &shift{reqs: make([]request, MaxRequests)}
	require.ErrorIs(t, s.add(request{}), ErrBudget)
}
