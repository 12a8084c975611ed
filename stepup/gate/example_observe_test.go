package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func ExampleWithMeterProvider() {
	// Any OpenTelemetry meter provider; a manual reader here, a
	// Prometheus exporter in a service (see package gateway).
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	clock := stepuptest.NewClock(stepuptest.Start())
	mem := stepuptest.Memory(clock)
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithMeterProvider(mp), gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	approver, err := stepuptest.Enroll(context.Background(), stepuptest.Enrollment(mem), "user:dana")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	call := stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	tk, _ := g.Propose(ctx, call)
	clock.Advance(42 * time.Second) // the approver reads the card
	if _, err := stepuptest.Approve(ctx, g.Desk(), approver, tk.ID); err != nil {
		panic(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				fmt.Printf("%s %s {%s} %d\n", m.Name, m.Unit, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				fmt.Printf("%s %s {%s} count %d sum %g\n", m.Name, m.Unit, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Count, p.Sum)
			}
		}
	}
	// Unordered output:
	// asu.gate.decisions {decision} {asu.decision=needs_approval,asu.effect_class=external} 1
	// asu.gate.decisions {decision} {asu.decision=approved,asu.effect_class=external} 1
	// asu.gate.pending {ticket} {asu.effect_class=external} 0
	// asu.gate.decision.duration s {asu.decision=approved,asu.effect_class=external} count 1 sum 42
}

func ExampleWithLogger() {
	// Drop what varies from run to run (the time and the ticket id).
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "ticket" {
				return slog.Attr{}
			}
			return a
		},
	}))
	clock := stepuptest.NewClock(stepuptest.Start())
	mem := stepuptest.Memory(clock)
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithLogger(log), gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, c := range []struct{ tool, args string }{
		{"send_email", `{"to":"finance@example.com","subject":"password: hunter2"}`},
		{"issue_refund", `{"order":"A-17","amount":900}`},
	} {
		_, _ = g.Propose(ctx, stepup.Call{Tool: c.tool, Args: json.RawMessage(c.args), Session: "s-1",
			Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	}
	// Output:
	// level=INFO msg="gate decision" decision=needs_approval tool=send_email class=external digest=f9d650660a64 reason="external effect"
	// level=INFO msg="gate decision" decision=deny tool=issue_refund class=irreversible reason="over the per-call limit"
}
