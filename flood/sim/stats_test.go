package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWilson(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		// Reference values of the 95% Wilson score interval.
		{0, 10, 0, 0.2775},
		{5, 10, 0.2366, 0.7634},
		{10, 10, 0.7225, 1},
		{1, 100, 0.0018, 0.0545},
		{500, 1000, 0.4691, 0.5309},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.k, tt.n)
		assert.InDelta(t, tt.lo, lo, 1e-4, "%d/%d", tt.k, tt.n)
		assert.InDelta(t, tt.hi, hi, 1e-4, "%d/%d", tt.k, tt.n)
	}
	lo, hi := Wilson(0, 0)
	assert.Equal(t, [2]float64{0, 1}, [2]float64{lo, hi})
}

// TestWilsonProperties: over generated counts the interval lies in
// [0, 1], holds the observed share, and narrows as trials grow.
func TestWilsonProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 5000 {
		n := 1 + rng.IntN(100_000)
		k := rng.IntN(n + 1)
		lo, hi := Wilson(k, n)
		p := float64(k) / float64(n)
		assert.True(t, 0 <= lo && lo <= p && p <= hi && hi <= 1, "%d/%d: [%v, %v]", k, n, lo, hi)
		lo4, hi4 := Wilson(4*k, 4*n)
		assert.LessOrEqual(t, hi4-lo4, hi-lo+1e-12, "%d/%d", k, n)
	}
}

func TestNewProportion(t *testing.T) {
	p := NewProportion(3, 4)
	assert.Equal(t, 0.75, p.P)
	assert.Equal(t, 4, p.Trials)
	assert.Equal(t, Proportion{Lo: 0, Hi: 1}, NewProportion(0, 0))
	assert.Equal(t, 4, NewProportion(9, 4).Successes, "clamped to the trials")
}

func TestNewEstimate(t *testing.T) {
	assert.Equal(t, Estimate{}, NewEstimate(nil))
	assert.Equal(t, Estimate{}, NewEstimate([]float64{math.NaN()}))
	assert.Equal(t, Estimate{Mean: 2, Lo: 2, Hi: 2, N: 1}, NewEstimate([]float64{2, math.NaN()}))
	e := NewEstimate([]float64{1, 2, 3, 4})
	assert.Equal(t, 2.5, e.Mean)
	assert.Equal(t, 4, e.N)
	// sd = 1.29, se = 0.645, half = 1.265
	assert.InDelta(t, 2.5-1.2652, e.Lo, 1e-3)
	assert.InDelta(t, 2.5+1.2652, e.Hi, 1e-3)
}
