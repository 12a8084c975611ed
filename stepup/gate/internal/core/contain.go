package core

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agentstepup/asu/stepup/plug"
)

// Plug-ins never decide by misbehaving. Every call of one (Policy, Judge,
// Renderer, Grants, Flood, Approver, Executor, the notifier) goes through
// [Contain]: it runs under a deadline (the caller's, or the plug-in's
// default when the caller gave none), in a goroutine of its own, so that
// a plug-in that ignores its context is waited for only until the
// deadline; a panic is recovered; an answer that comes after the context
// ended is discarded. Each misbehaviour is an error the call site turns
// into a denial, a refusal or a failed run, with a reason in the gate's
// own words. A plug-in that ignores its context keeps its goroutine until
// it returns: [Gate.Stragglers] counts those, and so does the
// asu.gate.plugins.stragglers metric. asu's own plug-ins ([Own]) keep
// their deadline themselves: they are called on the caller's goroutine,
// their panics recovered and their late answers discarded as any other's.

// Default deadlines of a plug-in call whose caller's context has none.
const (
	// DefaultPluginTimeout bounds a call of a deciding plug-in: a policy,
	// a model judge, a renderer, flood control, an approver.
	DefaultPluginTimeout = 30 * time.Second
	// DefaultExecuteTimeout bounds a run of an executor.
	DefaultExecuteTimeout = 10 * time.Minute
)

// ErrMisbehaved is plug.ErrMisbehaved, wrapped by every error [Contain]
// makes: the plug-in panicked, did not answer by its deadline, or
// answered after it.
var ErrMisbehaved = plug.ErrMisbehaved

// misbehaviour is how a plug-in misbehaved, in the gate's words.
type misbehaviour struct {
	plugin string
	what   string
}

func (m *misbehaviour) Error() string { return m.plugin + " " + m.what }

func (m *misbehaviour) Unwrap() error { return ErrMisbehaved }

// Misbehaviour returns how a plug-in misbehaved ("policy panicked"), or
// "" when err is no misbehaviour that [Contain] caught. The words are the
// gate's: never a panic's value or a plug-in's message.
func Misbehaviour(err error) string {
	var m *misbehaviour
	if errors.As(err, &m) {
		return m.Error()
	}
	return ""
}

// Contain calls f, a call of the plug-in named plugin, contained (see
// above): under ctx, bounded by timeout when ctx has no deadline. It
// returns f's answer, or an error wrapping [ErrMisbehaved] when f
// panicked, did not answer by the deadline or answered after ctx ended.
// An error f returned in time is returned as it is.
func Contain[T any](ctx context.Context, g *Gate, plugin string, timeout time.Duration, f func(ctx context.Context) (T, error)) (T, error) {
	return contain(ctx, g, false, plugin, timeout, f)
}

// contain is [Contain], on the caller's goroutine when own: a call of one
// of asu's own plug-ins (see [Own]).
func contain[T any](ctx context.Context, g *Gate, own bool, plugin string, timeout time.Duration, f func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if g.cfg.PluginTimeout > 0 {
		timeout = g.cfg.PluginTimeout
	}
	if _, ok := ctx.Deadline(); !ok {
		cctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	if own {
		v, err, panicked := callOwn(cctx, f)
		switch {
		case panicked:
			return zero, g.misbehaved(ctx, plugin, "panicked or exited")
		case cctx.Err() != nil:
			return zero, g.misbehaved(ctx, plugin, "answered after its context ended")
		}
		return v, err
	}
	type answer struct {
		v        T
		err      error
		panicked bool
	}
	done := make(chan answer, 1) // the plug-in's goroutine never blocks on it
	// state: 0 running, 1 answered, 2 given up on (a straggler).
	var state atomic.Int32
	go func() {
		var a answer
		returned := false
		defer func() {
			// A panic, whatever its value (nil, a runtime error, anything),
			// or a runtime.Goexit: f did not return.
			if r := recover(); r != nil || !returned {
				a = answer{panicked: true}
			}
			done <- a
			if !state.CompareAndSwap(0, 1) {
				g.stragglers.Add(-1)
				g.ObserveStraggler(context.WithoutCancel(ctx), -1)
			}
		}()
		a.v, a.err = f(cctx)
		returned = true
	}()
	select {
	case a := <-done:
		switch {
		case a.panicked:
			return zero, g.misbehaved(ctx, plugin, "panicked or exited")
		case cctx.Err() != nil:
			// The answer came when the call had already ended: whatever
			// it says, it is not acted on.
			return zero, g.misbehaved(ctx, plugin, "answered after its context ended")
		}
		return a.v, a.err
	case <-cctx.Done():
		g.stragglers.Add(1)
		g.ObserveStraggler(context.WithoutCancel(ctx), 1)
		if !state.CompareAndSwap(0, 2) { // it answered meanwhile, too late
			g.stragglers.Add(-1)
			g.ObserveStraggler(context.WithoutCancel(ctx), -1)
		}
		return zero, g.misbehaved(ctx, plugin, "did not answer by its deadline")
	}
}

// callOwn calls f on the caller's goroutine and recovers its panic.
func callOwn[T any](ctx context.Context, f func(ctx context.Context) (T, error)) (v T, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil || panicked {
			var zero T
			v, err, panicked = zero, nil, true
		}
	}()
	panicked = true // until f returns: a panic with a nil value is one too
	v, err = f(ctx)
	return v, err, false
}

// Stragglers is how many plug-in calls this gate gave up on that have not
// returned yet: plug-ins that ignore their context.
func (g *Gate) Stragglers() int64 { return g.stragglers.Load() }

// misbehaved logs and returns a plug-in's misbehaviour.
func (g *Gate) misbehaved(ctx context.Context, plugin, what string) error {
	m := &misbehaviour{plugin: plugin, what: what}
	if g.cfg.Obs != nil && g.cfg.Obs.Log != nil {
		g.cfg.Obs.Log.LogAttrs(ctx, slog.LevelWarn, "gate plug-in misbehaved", slog.String("plugin", plugin),
			slog.String("misbehaviour", what))
	}
	return m
}

// Why is reason, followed by how a plug-in misbehaved when err says so:
// the words of a denial's audit row.
func Why(reason string, err error) string {
	if m := Misbehaviour(err); m != "" {
		return reason + ": " + m
	}
	return reason
}
