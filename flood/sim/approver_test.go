package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApproverMedian(t *testing.T) {
	a := DefaultApprover()
	assert.Equal(t, DefaultUnloadedMedian, a.Median(0))
	// At the half rate the excess over the floor has halved.
	assert.Equal(t, DefaultFloorMedian+(DefaultUnloadedMedian-DefaultFloorMedian)/2, a.Median(DefaultHalfRate))
	prev := a.Median(0)
	for r := 1.0; r < 10_000; r *= 1.5 {
		m := a.Median(r)
		assert.LessOrEqual(t, m, prev, "median shrinks under load (%v prompts an hour)", r)
		assert.GreaterOrEqual(t, m, DefaultFloorMedian)
		prev = m
	}
}

func TestApproverCatch(t *testing.T) {
	a := DefaultApprover()
	assert.Zero(t, a.Catch(0, 0), "a card nobody reads is never caught")
	assert.InDelta(t, 1-DefaultRestedMiss, a.Catch(time.Hour, 0), 1e-9, "a rested, careful read misses the rested miss")
	assert.InDelta(t, 1-DefaultRestedMiss*(1+DefaultVigilanceGrowth), a.Catch(time.Hour, 24*time.Hour), 1e-6,
		"late in the shift the miss has grown by the vigilance growth")
	for _, onShift := range []time.Duration{0, 10 * time.Minute, time.Hour, 8 * time.Hour} {
		prev := -1.0
		for d := time.Duration(0); d < 2*time.Minute; d += 500 * time.Millisecond {
			c := a.Catch(d, onShift)
			assert.GreaterOrEqual(t, c, prev, "reading longer never lowers the catch")
			assert.True(t, c >= 0 && c <= 1)
			prev = c
		}
	}
	for d := time.Second; d < time.Minute; d *= 2 {
		assert.Greater(t, a.Catch(d, 0), a.Catch(d, 4*time.Hour), "catch falls with time on shift")
	}
}

// genDecision draws the inputs of one decision.
func genDecision(rng *rand.Rand) (malicious bool, onShift, d time.Duration, u float64, dwell time.Duration) {
	return rng.IntN(2) == 0, time.Duration(rng.Int64N(int64(12 * time.Hour))),
		time.Duration(rng.Int64N(int64(2 * time.Minute))), rng.Float64(), time.Duration(rng.Int64N(int64(time.Minute)))
}

// TestDecideDwellProperties: over generated decisions, a dwell never turns
// a denial into an approval, a longer dwell never does either, an approval
// always takes at least the dwell, and a benign card's answer ignores the
// dwell.
func TestDecideDwellProperties(t *testing.T) {
	a := DefaultApprover()
	rng := rand.New(rand.NewPCG(7, 7))
	for range 5000 {
		malicious, onShift, d, u, dwell := genDecision(rng)
		longer := dwell + time.Duration(rng.Int64N(int64(time.Minute)))
		none := a.decide(malicious, onShift, d, u, 0, aids{})
		with := a.decide(malicious, onShift, d, u, dwell, aids{})
		more := a.decide(malicious, onShift, d, u, longer, aids{})
		if !none.approve {
			require.False(t, with.approve, "dwell turned a denial into an approval")
		}
		if !with.approve {
			require.False(t, more.approve, "a longer dwell turned a denial into an approval")
		}
		if with.approve {
			require.GreaterOrEqual(t, with.spent, dwell, "an approval came before the dwell")
		}
		require.GreaterOrEqual(t, with.spent, min(d, dwell))
		if !malicious {
			require.Equal(t, none.approve, with.approve, "dwell changed a benign answer")
		}
		require.Equal(t, none.spent, d, "without a dwell the decision takes its drawn time")
	}
}

func TestDecideDwellRestoresCatch(t *testing.T) {
	a := DefaultApprover()
	// A reflex approval after half a second, with u just above its catch:
	// the dwell makes the approver read longer and catch it.
	d := 500 * time.Millisecond
	u := a.Catch(d, 0) + 0.01
	assert.True(t, a.decide(true, 0, d, u, 0, aids{}).approve)
	got := a.decide(true, 0, d, u, 5*time.Second, aids{})
	assert.False(t, got.approve)
	assert.Equal(t, 5*time.Second, got.spent)
	// With no attention at all in the wait, the dwell costs time and buys
	// nothing.
	a.DwellAttention = 0
	assert.True(t, a.decide(true, 0, d, u, 5*time.Second, aids{}).approve)
}

func TestUniformCorrelation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rho := range []float64{0, 0.5, 1} {
		a := DefaultApprover()
		a.Correlation = rho
		const n = 20_000
		var both, one int
		var sum float64
		for range n {
			card := rng.NormFloat64()
			u1, u2 := a.uniform(card, rng.NormFloat64()), a.uniform(card, rng.NormFloat64())
			require.True(t, u1 >= 0 && u1 <= 1)
			sum += u1
			if u1 > 0.9 {
				one++
				if u2 > 0.9 {
					both++
				}
			}
		}
		assert.InDelta(t, 0.5, sum/n, 0.01, "uniform for rho %v", rho)
		joint := float64(both) / float64(one)
		switch rho {
		case 0:
			assert.InDelta(t, 0.1, joint, 0.02, "independent")
		case 1:
			assert.Equal(t, 1.0, joint, "identical")
		default:
			assert.Greater(t, joint, 0.2, "a miss by one makes a miss by the other likelier")
		}
	}
}

func TestDrawTimeBounded(t *testing.T) {
	a := DefaultApprover()
	a.DecisionSpread = maxDecisionSpread
	assert.Equal(t, maxDecision, a.drawTime(0, 40))
	assert.GreaterOrEqual(t, a.drawTime(0, -40), time.Duration(0))
	assert.Equal(t, a.Median(10), a.drawTime(10, 0))
	assert.Equal(t, DefaultFloorMedian, a.drawTime(math.Inf(1), 0), "any load: the floor")
}

func TestApproverValidate(t *testing.T) {
	require.NoError(t, DefaultApprover().Validate())
	tests := []struct {
		name string
		edit func(*Approver)
		want string
	}{
		{"negative miss", func(a *Approver) { a.RestedMiss = -0.1 }, "rested miss must be in [0, 1]"},
		{"NaN miss", func(a *Approver) { a.RestedMiss = math.NaN() }, "rested miss must be in [0, 1]"},
		{"miss grown past one", func(a *Approver) { a.RestedMiss, a.VigilanceGrowth = 0.8, 1 }, "exceeds 1"},
		{"attention over one", func(a *Approver) { a.DwellAttention = 1.5 }, "dwell attention"},
		{"false deny", func(a *Approver) { a.FalseDeny = 2 }, "false deny"},
		{"correlation", func(a *Approver) { a.Correlation = -1 }, "correlation"},
		{"growth", func(a *Approver) { a.VigilanceGrowth = math.Inf(1) }, "vigilance growth"},
		{"half rate zero", func(a *Approver) { a.HalfRate = 0 }, "half rate"},
		{"spread", func(a *Approver) { a.DecisionSpread = 4 }, "decision spread"},
		{"read tau", func(a *Approver) { a.ReadTau = 0 }, "read tau"},
		{"median over a day", func(a *Approver) { a.UnloadedMedian = 25 * time.Hour }, "unloaded median"},
		{"floor above median", func(a *Approver) { a.FloorMedian = 2 * a.UnloadedMedian }, "floor median"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := DefaultApprover()
			tt.edit(&a)
			err := a.Validate()
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
