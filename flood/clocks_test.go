package flood_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// skewed is a replica's clock, off from c by off.
func skewed(c *clock, off time.Duration) func() time.Time {
	return func() time.Time { return c.Now().Add(off) }
}

// clockStores are the backends the clock tests share between replicas.
func clockStores(t *testing.T) map[string][2]store.Counters {
	m := memory.New(nil)
	a, b := openSQLiteReplicas(t)
	return map[string][2]store.Counters{"memory": {m, m}, "sqlite": {a, b}}
}

// TestClocksThatDisagree: two replicas share a store; one's clock is off
// by a generated offset (lagging by up to the store's horizon, stepped
// back, or ahead past it by a month or a year), over window lengths and
// counts. A replica whose clock lags never gets a fresh allowance: at one
// instant the two admit at most N together. One whose clock ran ahead
// admits at most its own N, after which the correct replica counts those
// requests too; and once two windows pass, the correct replica is admitted
// again, not held back until the other clock's time comes.
func TestClocksThatDisagree(t *testing.T) {
	offsets := []time.Duration{-time.Microsecond, -time.Second, -time.Minute, -10 * time.Minute, -19 * time.Minute,
		-3 * time.Hour, -20 * time.Hour, -store.CountHorizon + time.Minute,
		store.CountHorizon + 2*time.Hour, 30 * 24 * time.Hour, 365 * 24 * time.Hour}
	for name, st := range clockStores(t) {
		for _, per := range []time.Duration{time.Second, 10 * time.Minute, time.Hour} {
			for _, n := range []int64{1, 3, 10} {
				for _, off := range offsets {
					t.Run(fmt.Sprintf("%s/per=%v/n=%d/off=%v", name, per, n, off), func(t *testing.T) {
						c := newClock()
						c.Advance(per / 3)
						limits := off0(n, per)
						good := newLimiter(t, st[0], limits, c)
						other, err := flood.New(st[1], limits, skewed(c, off))
						require.NoError(t, err)
						session := t.Name()
						// The correct replica has counted in two windows.
						c.Advance(-per)
						admitN(t, good, 1, session, "u")
						c.Advance(per)
						first := admitN(t, good, int(n), session, "u")
						second := admitN(t, other, int(3*n), session, "u")
						third := admitN(t, good, int(3*n), session, "u")
						if off < 0 {
							assert.LessOrEqual(t, int64(first+second+third), n, "a lagging clock admitted beyond the limit")
							return
						}
						assert.LessOrEqual(t, int64(second), n, "a clock far ahead admits at most its own allowance")
						assert.Zero(t, third, "its requests count in the present")
						c.Advance(2*per + time.Second)
						assert.Positive(t, admitN(t, good, 1, session, "u"), "the present is not held back until the other clock's time")
					})
				}
			}
		}
	}
}

func off0(n int64, per time.Duration) flood.Limits {
	l := off
	l.Session = flood.Rate{N: n, Per: per}
	return l
}

// TestClockSteppedBack: one limiter counting steadily, then its clock
// stepped back by many amounts within the store's horizon: at the instant
// after the step it admits no more than a twin with the same history
// admits at the true present.
func TestClockSteppedBack(t *testing.T) {
	for _, back := range []time.Duration{time.Second, 5 * time.Minute, time.Hour, 2*time.Hour + time.Second, 3 * time.Hour, 23 * time.Hour} {
		t.Run(fmt.Sprintf("back=%v", back), func(t *testing.T) {
			c, tc := newClock(), newClock()
			lim := newLimiter(t, memory.New(nil), flood.Limits{}, c)
			twin := newLimiter(t, memory.New(nil), flood.Limits{}, tc)
			for range 120 {
				admitN(t, lim, 1, "s", "u")
				admitN(t, twin, 1, "s", "u")
				c.Advance(time.Minute)
				tc.Advance(time.Minute)
			}
			c.Advance(-back)
			present := admitN(t, twin, 100, "s", "u")
			assert.LessOrEqual(t, admitN(t, lim, 100, "s", "u"), present, "stepped back %v", back)
		})
	}
}

// TestLockoutNotShortened: after a lockout, denials recorded by replicas
// whose clocks lag by many amounts never move the run's latest denial
// back: the lockout lasts its full length from the latest denial.
func TestLockoutNotShortened(t *testing.T) {
	limits := off
	limits.SessionLockout = flood.Lockout{After: 3, For: 15 * time.Minute}
	for name, st := range clockStores(t) {
		for _, lag := range []time.Duration{time.Microsecond, time.Second, time.Minute, 14 * time.Minute, time.Hour, 48 * time.Hour} {
			t.Run(fmt.Sprintf("%s/lag=%v", name, lag), func(t *testing.T) {
				c := newClock()
				a := newLimiter(t, st[0], limits, c)
				b, err := flood.New(st[1], limits, skewed(c, -lag))
				require.NoError(t, err)
				r := req(t.Name(), "u")
				for range 3 {
					require.NoError(t, a.Decided(t.Context(), r, false))
				}
				c.Advance(time.Second)
				for range 2 {
					require.NoError(t, b.Decided(t.Context(), r, false))
				}
				latest := t0
				if lag < time.Second {
					latest = t0.Add(time.Second - lag)
				}
				c.Set(latest.Add(15*time.Minute - time.Microsecond))
				var le *flood.LimitError
				require.ErrorAs(t, a.Admit(t.Context(), r), &le)
				assert.ErrorIs(t, le, flood.ErrLockedOut)
				c.Set(latest.Add(15 * time.Minute))
				assert.NoError(t, a.Admit(t.Context(), r), "the lockout ends its length after the latest denial")
			})
		}
	}
}

// TestRetryAfterSaturates: windows up to the longest valid one, with any
// count, give a positive RetryAfter, never one that overflowed; a longer
// window is refused.
func TestRetryAfterSaturates(t *testing.T) {
	for _, per := range []time.Duration{
		time.Duration(math.MaxInt64).Truncate(time.Microsecond), 100 * 365 * 24 * time.Hour, flood.MaxRateWindow + time.Microsecond,
	} {
		assert.ErrorIs(t, off0(1, per).Validate(), flood.ErrInvalidLimits, "per %v", per)
	}
	for _, per := range []time.Duration{time.Hour, 7 * 24 * time.Hour, flood.MaxRateWindow} {
		for _, n := range []int64{1, 2, 7, math.MaxInt64} {
			limits := off0(n, per)
			require.NoError(t, limits.Validate())
			c := newClock()
			lim := newLimiter(t, memory.New(nil), limits, c)
			for range 4 {
				err := lim.Admit(t.Context(), req("s", "u"))
				var le *flood.LimitError
				if errors.As(err, &le) {
					assert.Positive(t, le.RetryAfter, "per %v n %d", per, n)
				}
			}
		}
	}
}
