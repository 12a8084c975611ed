package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// ScopeName is the instrumentation scope of the gate's meter.
const ScopeName = "github.com/agentstepup/asu/stepup/gate"

// Attribute keys of the gate's metrics. Every value is one of a small,
// fixed set (or, for [AttrClass], the policy's effect classes), never a
// tool name, principal, ticket id or argument, so that a misbehaving
// agent cannot grow a metric's cardinality.
const (
	// AttrDecision is a decision's kind: the audit row's decision
	// ("allow", "deny", "needs_approval", "approved", "denied",
	// "cancelled", "revoked"), "merged" for a request merged with an
	// identical pending one, or "expired" for a ticket nobody decided in
	// time (its audit row says "cancelled").
	AttrDecision = "asu.decision"
	// AttrClass is the ticket's effect class as the policy named it
	// ("none" when the call was refused before the policy classed it).
	AttrClass = "asu.effect_class"
	// AttrFloodScope is whose limit refused a request: "session",
	// "agent", "user", "approver", or "unknown" (a pending cap, which the
	// store enforces per session and per user, or flood control that
	// could not decide).
	AttrFloodScope = "asu.flood.scope"
	// AttrFloodLimit is which limit refused it: "rate", "lockout",
	// "pending_cap" or "unavailable".
	AttrFloodLimit = "asu.flood.limit"
	// AttrOutcome is what became of a call at execute: "executed",
	// "failed" (the executor returned an error), "abandoned" (a reclaimed
	// execution that could not run), "unknown" (it may have run; the
	// outcome is not recorded yet) or "refused" (nothing was spent).
	AttrOutcome = "asu.execution.outcome"
)

// WithLogger logs every decision the gate makes to l (default: none): one
// record per decision (message "gate decision": decision, tool, class,
// ticket, digest in short form, reason), per execution ("gate
// execution": outcome, tool, class, ticket, digest) and per execution
// taken over from a gate whose lease expired ("gate reclaim"). Arguments
// appear only as the digest's short form; arguments, evidence, nonces,
// tokens, rationales and the free text of an agent's cancellation or an
// approver's denial are never logged. Refusals at execute, failures and
// unknown outcomes are logged at warning level, the rest at info.
func WithLogger(l *slog.Logger) Option {
	return func(g *Gate) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", stepup.ErrConfig)
		}
		g.observer().log = l
		return nil
	}
}

// WithMeterProvider reports the gate's metrics through the OpenTelemetry
// meter of mp named [ScopeName] (default: none). The instruments, with
// their units and attributes:
//
//	asu.gate.decisions           counter          {decision}  AttrDecision, AttrClass
//	asu.gate.pending             up-down counter  {ticket}    AttrClass
//	asu.gate.decision.duration   histogram        s           AttrDecision, AttrClass
//	asu.gate.flood.refusals      counter          {refusal}   AttrFloodScope, AttrFloodLimit
//	asu.gate.flood.lockouts      counter          {refusal}   AttrFloodScope
//	asu.gate.executions          counter          {execution} AttrOutcome, AttrClass
//	asu.gate.lease.reclaims      counter          {reclaim}   AttrClass
//
// decisions counts every decision this gate committed: at propose (allow,
// deny, needs_approval, merged), by a person (approved, denied), by the
// clock (expired), by the runtime (cancelled) and by a revocation
// (revoked). The approval rate is approved / (approved + denied).
//
// pending rises when this gate parks a ticket and falls when this gate
// resolves a pending one (approved, denied, expired, cancelled). Gates
// sharing a store each count their own changes, so the sum over the
// replicas is the number of pending tickets parked since they started;
// a replica alone may read negative when its peers parked what it
// decided.
//
// decision.duration is the time from park to the decision, by the
// store's clock, of tickets approved, denied, expired or cancelled.
//
// flood.refusals counts calls flood control or a pending cap refused;
// flood.lockouts counts those refused because approvers denied too many
// of the scope's requests in a row (a subset of refusals, with
// AttrFloodLimit "lockout").
//
// executions counts what became of each call Execute or [Gate.Recover]
// took up (grant issuance is not counted: it is the grant ticket's
// approval); lease.reclaims counts executions this gate took over after
// their owner's lease expired.
//
// Through the Prometheus exporter (package stepup/gateway serves one)
// the names become asu_gate_decisions_total, asu_gate_pending,
// asu_gate_decision_duration_seconds, asu_gate_flood_refusals_total,
// asu_gate_flood_lockouts_total, asu_gate_executions_total and
// asu_gate_lease_reclaims_total, and the attribute keys' dots become
// underscores (asu_decision, asu_effect_class, asu_flood_scope, ...).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(g *Gate) error {
		if mp == nil {
			return fmt.Errorf("%w: nil meter provider", stepup.ErrConfig)
		}
		if err := g.observer().instruments(mp.Meter(ScopeName)); err != nil {
			return fmt.Errorf("%w: metrics: %v", stepup.ErrConfig, err)
		}
		return nil
	}
}

// observer returns the gate's observer, made on first use with nothing
// to report to. Options run one at a time, in New.
func (g *Gate) observer() *observer {
	if g.obs == nil {
		g.obs = &observer{log: slog.New(slog.DiscardHandler)}
		_ = g.obs.instruments(noop.NewMeterProvider().Meter(ScopeName)) // no-op instruments never fail
	}
	return g.obs
}

// durationBounds are the buckets, in seconds, of the time a person takes
// to decide: from a glance to the longest approval windows.
var durationBounds = []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 86400}

// instruments makes the gate's instruments on m.
func (o *observer) instruments(m metric.Meter) error {
	var errs [7]error
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
	return errors.Join(errs[:]...)
}

// decisionMerged is the decision attribute of a request merged with an
// identical pending one.
const decisionMerged = "merged"

// observeDecided reports decision about ticket a, committed at at.
// reason is the gate's own wording, never an agent's or approver's free
// text.
func (g *Gate) observeDecided(ctx context.Context, a store.Approval, decision, reason string, at time.Time) {
	o := g.obs
	if o == nil {
		return
	}
	class := classOf(a)
	attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrDecision, decision), attribute.String(AttrClass, class)))
	o.decisions.Add(ctx, 1, attrs)
	switch decision {
	case receipt.DecisionNeedsApproval:
		o.pending.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class))))
	case receipt.DecisionApproved, receipt.DecisionDenied, receipt.DecisionExpired, receipt.DecisionCancelled:
		o.pending.Add(ctx, -1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class))))
		if !a.CreatedAt.IsZero() && !at.Before(a.CreatedAt) {
			o.decisionTime.Record(ctx, at.Sub(a.CreatedAt).Seconds(), attrs)
		}
	}
	if o.log.Enabled(ctx, slog.LevelInfo) {
		o.log.LogAttrs(ctx, slog.LevelInfo, "gate decision", append(about(a, slog.String("decision", decision)),
			slog.String("reason", reason))...)
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

// observeFlood reports a refusal by flood control (err from Flood.Admit,
// or the store's pending cap).
func (g *Gate) observeFlood(ctx context.Context, err error) {
	o := g.obs
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

// observeRun reports what became of ticket a's run, from the error run
// (or the consume before it) returned, and returns err.
func (g *Gate) observeRun(ctx context.Context, a store.Approval, err error) error {
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

// observeRefused reports a refusal at execute: nothing was spent.
func (g *Gate) observeRefused(ctx context.Context, a store.Approval, reason string) {
	g.observeExecution(ctx, a, outcomeRefused, reason)
}

// observeAbandoned reports a reclaimed execution recorded as never run.
func (g *Gate) observeAbandoned(ctx context.Context, a store.Approval, reason string) {
	g.observeExecution(ctx, a, outcomeAbandoned, reason)
}

func (g *Gate) observeExecution(ctx context.Context, a store.Approval, outcome, reason string) {
	o := g.obs
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
	if !o.log.Enabled(ctx, level) {
		return
	}
	attrs := about(a, slog.String("outcome", outcome))
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	o.log.LogAttrs(ctx, level, "gate execution", attrs...)
}

// observeReclaimed reports an execution this gate took over.
func (g *Gate) observeReclaimed(ctx context.Context, a store.Approval) {
	o := g.obs
	if o == nil {
		return
	}
	class := classOf(a)
	o.reclaims.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class))))
	if o.log.Enabled(ctx, slog.LevelWarn) {
		o.log.LogAttrs(ctx, slog.LevelWarn, "gate reclaim", about(a)...)
	}
}

// classOf is ticket a's effect class as an attribute value.
func classOf(a store.Approval) string {
	if a.EffectClass == "" {
		return "none"
	}
	return a.EffectClass
}

// observeParked reports ticket a parked for a person, or merged with an
// identical pending request (which parks nothing new).
func (g *Gate) observeParked(ctx context.Context, a store.Approval, merged bool, reason string) {
	if merged {
		g.observeDecided(ctx, a, decisionMerged, "merged with an identical pending request", a.CreatedAt)
		return
	}
	g.observeDecided(ctx, a, receipt.DecisionNeedsApproval, reason, a.CreatedAt)
}
