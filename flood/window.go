package flood

import (
	"math"
	"math/bits"
	"time"
)

// The sliding estimate ([Limiter] counts every rate with it): the count of
// the current window + the count of the previous window × the share of
// the previous window still inside a sliding window ending now. It needs
// the two newest windows of a key, which is what the store keeps. A
// request is admitted when the estimate, this request included, is at most
// r.N. In particular at most r.N requests are admitted in any one aligned
// window, and fewer than 2×r.N in any span of length Per; and a burst at
// the end of one window is not followed by a fresh allowance of r.N at
// the start of the next, as it would be with fixed windows alone. The
// estimate counts a request still inside the sliding window at its full
// weight only at the boundary, so a client asking exactly r.N times per
// window, evenly spaced, finds the estimate a little over r.N and is
// admitted about r.N−1 times per window (one per two windows for r.N 1).

// window is the aligned window holding an instant, in microseconds.
type window struct {
	start   time.Time
	per     uint64 // window length
	elapsed uint64 // time since start, < per
}

func windowAt(now time.Time, per time.Duration) window {
	p := per.Microseconds()
	us := now.UnixMicro()
	start := us - ((us%p)+p)%p // floor, also before 1970
	return window{start: time.UnixMicro(start), per: uint64(p), elapsed: uint64(us - start)}
}

// admits reports whether cur + prev×(per−elapsed)/per ≤ n, exactly:
// cur ≤ n and prev×(per−elapsed) ≤ (n−cur)×per, in 128 bits.
func (w window) admits(cur, prev, n int64) bool {
	if cur > n {
		return false
	}
	hi1, lo1 := bits.Mul64(uint64(prev), w.per-w.elapsed)
	hi2, lo2 := bits.Mul64(uint64(n-cur), w.per)
	return hi1 < hi2 || (hi1 == hi2 && lo1 <= lo2)
}

// maxWait is the longest Duration in whole microseconds.
const maxWait = uint64(math.MaxInt64 / int64(time.Microsecond))

// retryAfter returns when one more request would be admitted, given the
// admitted counts cur and prev, if nobody else asks meanwhile: at least a
// microsecond, computed exactly in whole microseconds, and saturated at
// the longest Duration.
func (w window) retryAfter(cur, prev, n int64) time.Duration {
	var wait uint64
	if cur+1 <= n {
		// Within this window, once the previous window's share has shrunk
		// enough: prev × (per − t) / per ≤ n − cur − 1, so
		// t ≥ per × (prev − (n − cur − 1)) / prev. Refused here means prev
		// is over n − cur − 1, so t > elapsed.
		wait = ceilMulDiv(w.per, uint64(prev-(n-cur-1)), uint64(prev)) - w.elapsed
	} else {
		// In the next window, where this window is the previous one:
		// cur × (per − t) / per ≤ n − 1.
		wait = w.per - w.elapsed
		if cur > n-1 {
			wait = satAdd(wait, ceilMulDiv(w.per, uint64(cur-(n-1)), uint64(cur)))
		}
	}
	return time.Duration(min(max(wait, 1), maxWait)) * time.Microsecond
}

// satAdd returns a + b, or the largest uint64 when that overflows.
func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// ceilMulDiv returns ⌈a×b/c⌉ for b ≤ c, in 128 bits.
func ceilMulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, r := bits.Div64(hi, lo, c)
	if r != 0 {
		q++
	}
	return q
}
