package core

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// Attribute keys of the practice counter; package gate documents them.
const (
	AttrPracticeClass   = "asu.practice.class"
	AttrPracticeOutcome = "asu.practice.outcome"
)

// Practice outcomes, as [AttrPracticeOutcome] values.
const (
	practiceCaught = "caught"
	practiceMissed = "missed"
)

// practiceInstrument makes the practice counter on m.
func (o *Observer) practiceInstrument(m metric.Meter) (err error) {
	o.practice, err = m.Int64Counter("asu.gate.practice", metric.WithUnit("{request}"),
		metric.WithDescription("Practice requests decided, by effect class, practice class and outcome (caught: denied; missed: approved)."))
	return err
}

// ObservePracticed reports practice request a (of practice class
// practiceClass) decided at at: caught when kind is
// audit.DecisionPracticeCaught, missed otherwise. It ends the ticket's
// count among the pending, as every other resolution does, and counts
// the outcome by effect class and practice class: never by approver, so
// the metric names nobody (the figures do, on the operator's listener).
func (g *Gate) ObservePracticed(ctx context.Context, a store.Approval, kind, practiceClass string, at time.Time) {
	o := g.cfg.Obs
	if o == nil {
		return
	}
	class := classOf(a)
	outcome := practiceMissed
	if kind == audit.DecisionPracticeCaught {
		outcome = practiceCaught
	}
	switch practiceClass {
	case audit.PracticeLookalikeDomain, audit.PracticeAmountTenfold:
	default:
		practiceClass = "unknown"
	}
	o.pending.Add(ctx, -1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class))))
	if o.practice != nil {
		o.practice.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrClass, class),
			attribute.String(AttrPracticeClass, practiceClass), attribute.String(AttrPracticeOutcome, outcome))))
	}
	if o.Log.Enabled(ctx, slog.LevelInfo) {
		o.Log.LogAttrs(ctx, slog.LevelInfo, "gate decision", append(about(a, slog.String("decision", kind)),
			slog.String("practice_class", practiceClass))...)
	}
}
