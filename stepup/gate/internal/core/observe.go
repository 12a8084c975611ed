package core

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// ScopeName is the instrumentation scope of the gate's meter
// (gate.ScopeName).
const ScopeName = "github.com/agentstepup/asu/stepup/gate"

// Attribute keys of the gate's metrics; package gate documents them.
const (
	AttrDecision   = "asu.decision"
	AttrClass      = "asu.effect_class"
	AttrFloodScope = "asu.flood.scope"
	AttrFloodLimit = "asu.flood.limit"
	AttrOutcome    = "asu.execution.outcome"
)

// ObserverOf returns the gate's observer, made on first use with nothing
// to report to. Options run one at a time, in New.
func (g *Config) ObserverOf() *Observer {
	if g.Obs == nil {
		g.Obs = &Observer{Log: slog.New(slog.DiscardHandler)}
		_ = g.Obs.Instruments(noop.NewMeterProvider().Meter(ScopeName)) // no-op instruments never fail
	}
	return g.Obs
}

// durationBounds are the buckets, in seconds, of the time a person takes
// to decide: from a glance to the longest approval windows.
var durationBounds = []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 86400}

// Instruments makes the gate's instruments on m.
func (o *Observer) Instruments(m metric.Meter) error {
	var errs [8]error
	o.decisions, errs[0] = m.Int64Counter("asu.gate.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("Decisions the gate committed, by kind and effect class."))
	o.pending, errs[1] = m.Int64UpDownCounter("asu.gate.pending", metric.WithUnit("{ticket}"),
		metric.WithDescription("Tickets parked for a person and not yet resolved."))
	o.decisionTime, errs[2] = m.Float64Histogram("asu.gate.decision.duration", metric.WithUnit("s"),
		metric.WithDescription("Time from park to decision of a ticket that waited for a person."),
		metric.WithExplicitBucketBoundaries(durationBounds...))
	o.refusals, errs[3] = m.Int64Counter("asu.gate.flood.refusals", metric.WithUnit("{refusal}"),
		metric.WithDescription("Calls refused by flood control or a pending cap, by scope and limit."))
	o.lockouts, errs[4] = m.Int64Counter("asu.gate.flood.lockouts", metric.WithUnit("{refusal}"),
		metric.WithDescription("Calls refused because approvers denied too many of the scope's requests in a row."))
	o.executions, errs[5] = m.Int64Counter("asu.gate.executions", metric.WithUnit("{execution}"),
		metric.WithDescription("Calls taken up at execute, by outcome."))
	o.reclaims, errs[6] = m.Int64Counter("asu.gate.lease.reclaims", metric.WithUnit("{reclaim}"),
		metric.WithDescription("Executions taken over after their owner's lease expired."))
	o.stragglers, errs[7] = m.Int64UpDownCounter("asu.gate.plugins.stragglers", metric.WithUnit("{call}"),
		metric.WithDescription("Plug-in calls the gate stopped waiting for at their deadline that have not returned yet."))
	return errors.Join(append(errs[:], o.practiceInstrument(m))...)
}

// decisionMerged is the decision attribute of a request merged with an
// identical pending one.
const decisionMerged = "merged"

// ObserveDecided reports decision about ticket a, committed at at.
// reason is the gate's own wording, never an agent's or approver's free
// text.
func (g *Gate) ObserveDecided(ctx context.Context, a store.Approval, decision, reason string, at time.Time) {
	o := g.cfg.Obs
	if o == nil {
		return
	}
	class := classOf(a)
	attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrDecision, decision), attribute.String(AttrClass, class)))
	o.decisions.Add(ctx, 1, attrs)
	switch decision {
	case audit.DecisionNeedsApproval:
		o.pending.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class))))
	case audit.DecisionApproved, audit.DecisionDenied, audit.DecisionExpired, audit.DecisionCancelled:
		o.pending.Add(ctx, -1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class))))
		if !a.CreatedAt.IsZero() && !at.Before(a.CreatedAt) {
			o.decisionTime.Record(ctx, at.Sub(a.CreatedAt).Seconds(), attrs)
		}
	}
	if o.Log.Enabled(ctx, slog.LevelInfo) {
		o.Log.LogAttrs(ctx, slog.LevelInfo, "gate decision", append(about(a, slog.String("decision", decision)),
			slog.String("reason", reason))...)
	}
}

// ObserveStoreFailure logs a store failure that ended an operation: the
// error of a store never quotes record contents, so it is logged as it
// is, at error level.
func (g *Gate) ObserveStoreFailure(ctx context.Context, op string, err error) {
	if o := g.cfg.Obs; o != nil && o.Log.Enabled(ctx, slog.LevelError) {
		o.Log.LogAttrs(ctx, slog.LevelError, "store failure", slog.String("op", op), slog.String("error", err.Error()))
	}
}

// about is what a log record says about ticket a, after lead: its tool,
// class, id and digest (in short form; none for a call refused before it
// was sealed).
func about(a store.Approval, lead ...slog.Attr) []slog.Attr {
	attrs := append(lead, slog.String("tool", a.Tool), slog.String("class", classOf(a)), slog.String("ticket", a.ID))
	if !a.Digest.IsZero() {
		attrs = append(attrs, slog.String("digest", a.Digest.Short()))
	}
	return attrs
}

// ObserveFlood reports a refusal by flood control (err from Flood.Admit,
// or the store's pending cap).
func (g *Gate) ObserveFlood(ctx context.Context, err error) {
	o := g.cfg.Obs
	if o == nil {
		return
	}
	scope, limit := "unknown", "unavailable"
	var le *flood.LimitError
	switch {
	case errors.As(err, &le):
		scope, limit = string(le.Scope), "rate"
		if errors.Is(err, flood.ErrLockedOut) {
			limit = "lockout"
		}
	case errors.Is(err, store.ErrPendingCap):
		limit = "pending_cap"
	}
	switch scope {
	case string(flood.ScopeSession), string(flood.ScopeAgent), string(flood.ScopeUser), string(flood.ScopeApprover):
	default:
		scope = "unknown" // a Flood of the integrator's own may name anything
	}
	o.refusals.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrFloodScope, scope),
		attribute.String(AttrFloodLimit, limit))))
	if limit == "lockout" {
		o.lockouts.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrFloodScope, scope))))
	}
}

// Outcomes of an execution, as [AttrOutcome] values.
const (
	outcomeExecuted  = "executed"
	outcomeFailed    = "failed"
	outcomeAbandoned = "abandoned"
	outcomeUnknown   = "unknown"
	outcomeRefused   = "refused"
)

// ObserveRun reports what became of ticket a's run, from the error run
// (or the consume before it) returned, and returns err.
func (g *Gate) ObserveRun(ctx context.Context, a store.Approval, err error) error {
	outcome := outcomeExecuted
	switch {
	case err == nil:
	case errors.Is(err, stepup.ErrExecutorFailed):
		outcome = outcomeFailed
	default: // run's only other errors leave the outcome unknown
		outcome = outcomeUnknown
	}
	g.observeExecution(ctx, a, outcome, "")
	return err
}

// ObserveRefused reports a refusal at execute: nothing was spent.
func (g *Gate) ObserveRefused(ctx context.Context, a store.Approval, reason string) {
	g.observeExecution(ctx, a, outcomeRefused, reason)
}

// ObserveAbandoned reports a reclaimed execution recorded as never run.
func (g *Gate) ObserveAbandoned(ctx context.Context, a store.Approval, reason string) {
	g.observeExecution(ctx, a, outcomeAbandoned, reason)
}

func (g *Gate) observeExecution(ctx context.Context, a store.Approval, outcome, reason string) {
	o := g.cfg.Obs
	if o == nil {
		return
	}
	class := classOf(a)
	o.executions.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrOutcome, outcome),
		attribute.String(AttrClass, class))))
	level := slog.LevelInfo
	if outcome != outcomeExecuted {
		level = slog.LevelWarn
	}
	if !o.Log.Enabled(ctx, level) {
		return
	}
	attrs := about(a, slog.String("outcome", outcome))
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	o.Log.LogAttrs(ctx, level, "gate execution", attrs...)
}

// ObserveReclaimed reports an execution this gate took over.
func (g *Gate) ObserveReclaimed(ctx context.Context, a store.Approval) {
	o := g.cfg.Obs
	if o == nil {
		return
	}
	class := classOf(a)
	o.reclaims.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class))))
	if o.Log.Enabled(ctx, slog.LevelWarn) {
		o.Log.LogAttrs(ctx, slog.LevelWarn, "gate reclaim", about(a)...)
	}
}

// classOf is ticket a's effect class as an attribute value.
func classOf(a store.Approval) string {
	if a.EffectClass == "" {
		return "none"
	}
	return a.EffectClass
}

// ObserveParked reports ticket a parked for a person, or merged with an
// identical pending request (which parks nothing new).
func (g *Gate) ObserveParked(ctx context.Context, a store.Approval, merged bool, reason string) {
	if merged {
		g.ObserveDecided(ctx, a, decisionMerged, "merged with an identical pending request", a.CreatedAt)
		return
	}
	g.ObserveDecided(ctx, a, audit.DecisionNeedsApproval, reason, a.CreatedAt)
}

// ObserveStraggler reports a plug-in call given up on at its deadline
// (delta 1), or one such call returning at last (delta -1).
func (g *Gate) ObserveStraggler(ctx context.Context, delta int64) {
	if o := g.cfg.Obs; o != nil && o.stragglers != nil {
		o.stragglers.Add(ctx, delta)
	}
}
