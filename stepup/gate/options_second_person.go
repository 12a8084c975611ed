package gate

import (
	"fmt"
	"math"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
)

// BelowFloorMaxAge is how long the gate's reading of who is below the
// catch floor ([WithSecondPersonBelowFloor]) stands, by the store's clock,
// before it reads the audit again.
const BelowFloorMaxAge = time.Minute

// WithSecondPersonBelowFloor routes the tickets of classes away from an
// approver whose catch rate of practice requests ([WithPractice]) lies
// wholly below floor, until they recover: their approval of such a ticket
// is refused with [plug.ErrSecondPersonNeeded] (nothing is approved; the
// ticket waits for another person of its group), while their denial still
// counts. The rate is the one the figures show, over the audit of the last
// window (at most [MaxMetricsWindow]): "wholly below" is the high end of
// its Wilson 95% interval under floor, so a few unlucky misses name
// nobody, and an approver who decided no practice request is never below.
// An approver recovers by catching practice requests: they keep coming to
// them, and their denials of real requests are accepted throughout.
//
// floor is a rate in (0, 1]; figures.DefaultCatchFloor (one half) is the
// figures' own warning line. Practice requests must be on for the rule to
// ever apply.
func WithSecondPersonBelowFloor(floor float64, window time.Duration, classes ...string) Option {
	return option(func(g *core.Config) error {
		switch {
		case math.IsNaN(floor) || floor <= 0 || floor > 1:
			return fmt.Errorf("%w: a catch floor is a rate in (0, 1], not %v", stepup.ErrConfig, floor)
		case window <= 0 || window > MaxMetricsWindow:
			return fmt.Errorf("%w: the catch floor's window is up to %v, not %v", stepup.ErrConfig, MaxMetricsWindow, window)
		case len(classes) == 0:
			return fmt.Errorf("%w: name the classes another person must approve", stepup.ErrConfig)
		}
		g.Second = &core.SecondPerson{Floor: floor, Window: window, Classes: append([]string(nil), classes...)}
		return nil
	})
}
