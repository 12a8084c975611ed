package gateway

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/agentstepup/asu/stepup"
)

// MetricsPath is where [Metrics] answers.
const MetricsPath = "/metrics"

// Metrics is a meter provider for the gate (gate.WithMeterProvider) and
// the handler that serves what it measured for Prometheus to scrape, at
// GET [MetricsPath] in Prometheus' text format; the metric names are
// listed on gate.WithMeterProvider. Serve it on a listener of its own,
// never the agent API's or the approval site's: neither a runtime nor an
// approver's browser has a reason to read it, and an operator's scraper
// has no reason to reach either of them.
//
// The metrics carry counts by decision, effect class, flood scope and
// outcome only: no tool names, principals, ticket ids or arguments.
type Metrics struct {
	provider *sdkmetric.MeterProvider
	reg      *prometheus.Registry
	mux      *http.ServeMux
	handler  http.Handler
}

// NewMetrics returns a [Metrics] with a registry of its own: nothing is
// registered with Prometheus' global registry, so several gates in one
// process (or one test binary) each serve only their own.
func NewMetrics() (*Metrics, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("%w: metrics exporter: %v", stepup.ErrConfig, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return &Metrics{
		provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp)),
		reg:      reg,
		mux:      mux,
		handler:  secure(mux),
	}, nil
}

// MeterProvider is what to give the gate: gate.WithMeterProvider(m.MeterProvider()).
func (m *Metrics) MeterProvider() metric.MeterProvider { return m.provider }

// ServeHTTP serves the measurements at GET [MetricsPath]; every other
// route is not found.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

// Shutdown stops the meter provider: later measurements are dropped.
func (m *Metrics) Shutdown(ctx context.Context) error { return m.provider.Shutdown(ctx) }
