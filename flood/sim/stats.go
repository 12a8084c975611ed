package sim

import "math"

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Proportion is a share of runs with its 95% Wilson score interval.
type Proportion struct {
	Successes int     `json:"successes"`
	Trials    int     `json:"trials"`
	P         float64 `json:"p"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
}

// NewProportion returns successes out of trials with its 95% Wilson
// interval (E. B. Wilson, "Probable inference, the law of succession, and
// statistical inference", Journal of the American Statistical Association
// 22(158):209-212, 1927), which, unlike the normal approximation, stays
// inside [0, 1] and is not empty at 0 or at trials successes. Zero trials
// give P 0 and the interval [0, 1].
func NewProportion(successes, trials int) Proportion {
	if trials <= 0 {
		return Proportion{Lo: 0, Hi: 1}
	}
	successes = min(max(successes, 0), trials)
	lo, hi := Wilson(successes, trials)
	return Proportion{Successes: successes, Trials: trials, P: float64(successes) / float64(trials), Lo: lo, Hi: hi}
}

// Wilson returns the 95% Wilson score interval of successes out of n
// trials; [0, 1] when n is not positive.
func Wilson(successes, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p := float64(min(max(successes, 0), n)) / float64(n)
	nf := float64(n)
	z2 := z95 * z95
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z95 / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = max(centre-half, 0), min(centre+half, 1)
	// At the ends the interval touches the end exactly; rounding must
	// not leave it a hair inside.
	if successes <= 0 {
		lo = 0
	}
	if successes >= n {
		hi = 1
	}
	return lo, hi
}

// Estimate is the mean over runs of a per-run figure, with a 95% interval
// from the normal approximation (mean ± 1.96 standard errors). N counts
// the runs where the figure exists (a run where no benign request was
// approved has no latency); when N is 0 every field is 0.
type Estimate struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"`
}

// NewEstimate returns the mean of xs and its 95% interval, skipping NaNs.
func NewEstimate(xs []float64) Estimate {
	var n int
	var sum float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			n++
			sum += x
		}
	}
	if n == 0 {
		return Estimate{}
	}
	mean := sum / float64(n)
	var ss float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			ss += (x - mean) * (x - mean)
		}
	}
	half := 0.0
	if n > 1 {
		half = z95 * math.Sqrt(ss/float64(n-1)/float64(n))
	}
	return Estimate{Mean: mean, Lo: mean - half, Hi: mean + half, N: n}
}
