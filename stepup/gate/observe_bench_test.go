package gate_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/store/memory"
)

// BenchmarkObservedProposeExecute is an allowed call proposed and run on
// the memory store, unobserved (the baseline), with no-op metrics, and
// with the SDK's metrics and a JSON log: what observing costs a decision.
func BenchmarkObservedProposeExecute(b *testing.B) {
	for _, bb := range []struct {
		name string
		opts func() []gate.Option
	}{
		{"unobserved", func() []gate.Option { return nil }},
		{"noop", func() []gate.Option {
			return []gate.Option{gate.WithMeterProvider(noop.NewMeterProvider())}
		}},
		{"sdk+log", func() []gate.Option {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			return []gate.Option{gate.WithMeterProvider(mp), gate.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil)))}
		}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			g, _ := benchGate(b, memory.New(nil), bb.opts()...)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				tk, err := g.Propose(ctx, oneKB(i))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := g.Execute(ctx, tk.ID); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
