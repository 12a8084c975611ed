package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func ExampleNewMetrics() {
	m, err := gateway.NewMetrics()
	if err != nil {
		panic(err)
	}
	defer m.Shutdown(context.Background())
	mem := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithMeterProvider(m.MeterProvider()),
		gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	// In a service: gateway.Serve(ctx, gateway.NewServer(m, 0), ln) on a
	// listener of its own.
	for _, args := range []string{`{"to":"finance@example.com"}`, `{"to":"legal@example.com"}`} {
		_, _ = g.Propose(context.Background(), stepup.Call{Tool: "send_email", Args: json.RawMessage(args),
			Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	}

	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", gateway.MetricsPath, nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "asu_gate_decisions_total") || strings.HasPrefix(line, "asu_gate_pending") {
			fmt.Println(line)
		}
	}
	// Output:
	// asu_gate_decisions_total{asu_decision="needs_approval",asu_effect_class="external"} 2
	// asu_gate_pending{asu_effect_class="external"} 2
}

func ExampleMetrics_ServeFigures() {
	m, err := gateway.NewMetrics()
	if err != nil {
		panic(err)
	}
	defer m.Shutdown(context.Background())
	mem := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem))
	if err != nil {
		panic(err)
	}
	m.ServeFigures(func(ctx context.Context) (figures.Report, error) {
		return g.Admin().Metrics(ctx, 7*24*time.Hour)
	})
	_, _ = g.Propose(context.Background(), stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})

	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", gateway.FiguresPath+".json", nil))
	var f figures.Report
	_ = json.Unmarshal(rec.Body.Bytes(), &f)
	fmt.Println(rec.Code, f.ByClass["external"].Asked)
	// Output: 200 1
}

// The figures page names the window it covers.
func ExampleFiguresWindow() {
	m, err := gateway.NewMetrics()
	if err != nil {
		panic(err)
	}
	defer m.Shutdown(context.Background())
	m.ServeFigures(func(context.Context) (figures.Report, error) {
		return figures.Report{}, nil
	}, gateway.FiguresWindow(24*time.Hour))
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", gateway.FiguresPath, nil))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), "No decisions yet in the last 24 hours."))
	// Output: 200 true
}

// With the figures served, each approver's catch rate of practice
// requests is a metric too, for an alert on
// asu_figures_below_catch_floor == 1.
func ExampleCatchMetrics() {
	m, err := gateway.NewMetrics()
	if err != nil {
		panic(err)
	}
	defer m.Shutdown(context.Background())
	m.ServeFigures(func(context.Context) (figures.Report, error) {
		var t figures.Tally
		for i, d := range []string{"practice_caught", "practice_missed", "practice_missed", "practice_missed"} {
			t.Add(&audit.Record{Decision: d, Approver: "user:erin", EffectClass: "external", Time: int64(i)})
		}
		return t.Report(figures.DefaultRubberStampRule()), nil
	})
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", gateway.MetricsPath, nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "asu_figures_catch_rate{") || strings.HasPrefix(line, "asu_figures_below_catch_floor{") {
			fmt.Println(line)
		}
	}
	fmt.Println(len(gateway.CatchMetrics), "metrics")
	// Output:
	// asu_figures_below_catch_floor{approver="user:erin"} 0
	// asu_figures_catch_rate{approver="user:erin"} 0.25
	// 10 metrics
}
