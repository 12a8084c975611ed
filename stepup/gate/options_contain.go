package gate

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
)

// Every plug-in the gate calls (its Policy and Router, Approver and
// Receipter, Renderer, Flood, Executors, model Judge and Notifier) is
// contained: a panic (whatever its value), an error, a hang past the
// call's deadline or an answer that comes after the call's context ended
// decides nothing. It is a denial of the call (a refused answer, a
// refused Execute, a "failed" run for an Executor) with the misbehaviour
// in the reason, in the gate's own words. A call whose caller's context
// has no deadline gets one: [DefaultPluginTimeout], or
// [DefaultExecuteTimeout] for an Executor, or the one [WithPluginTimeout]
// sets. The gate stops waiting at the deadline; a plug-in that ignores
// its context keeps its goroutine until it returns. [Gate.Stragglers]
// counts those, as does the asu.gate.plugins.stragglers metric. asu's own
// plug-ins (policy.Catalog, passkey.Approver, card.Renderer,
// flood.Limiter and the store's grant check, but no type that wraps one)
// honour their context and do bounded work, so they are called on the
// caller's goroutine; their panics and late answers are contained as any
// other's. A
// notifier runs apart from every decision and never delays or changes
// one: at most 64 notices are in its hands at once.

// Default deadlines of plug-in calls whose caller gave none.
const (
	// DefaultPluginTimeout bounds a call of a Policy, Router, Approver,
	// Renderer, Grants, Flood or Judge.
	DefaultPluginTimeout = 30 * time.Second
	// DefaultExecuteTimeout bounds a run of an Executor.
	DefaultExecuteTimeout = 10 * time.Minute
)

// WithPluginTimeout sets the deadline of every plug-in call whose caller's
// context has none, executors and notifiers included (default
// [DefaultPluginTimeout], [DefaultExecuteTimeout] for executors and ten
// seconds for a notice).
func WithPluginTimeout(d time.Duration) Option {
	return option(func(g *core.Config) error {
		if d <= 0 {
			return fmt.Errorf("%w: plug-in timeout must be positive", stepup.ErrConfig)
		}
		g.PluginTimeout = d
		return nil
	})
}

// Stragglers returns how many plug-in calls the gate stopped waiting for
// at their deadline that have not returned yet: plug-ins that ignore
// their context, each holding a goroutine.
func (g *Gate) Stragglers() int64 { return g.rt.Core().Stragglers() }
