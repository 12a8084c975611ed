package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

var (
	sample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
	label  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

// scrape reads the Prometheus text at url into series "name{k=v,...}"
// (labels in key order, quotes dropped) and their values.
func scrape(t *testing.T, url string) (map[string]float64, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	series := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sample.FindStringSubmatch(line)
		require.NotNil(t, m, "not a sample: %q", line)
		var labels []string
		for _, l := range label.FindAllStringSubmatch(m[2], -1) {
			labels = append(labels, l[1]+"="+l[2])
		}
		sort.Strings(labels)
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err, line)
		series[m[1]+"{"+strings.Join(labels, ",")+"}"] = v
	}
	return series, string(body)
}

func TestMetricsServeTheGateForPrometheus(t *testing.T) {
	m, err := gateway.NewMetrics()
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	exec := &recorder{}
	h := stepuptest.NewGate(t, nil, gate.WithMeterProvider(m.MeterProvider()), gate.WithExecutor("send_email", exec))
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports",
		Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), &gateway.SiteOptions{Tickets: h.Gate})
	require.NoError(t, err)
	metrics := httptest.NewServer(m)
	t.Cleanup(metrics.Close)

	ctx := context.Background()
	call := sendEmail("finance@example.com")
	call.Args = []byte(`{"to":"finance@example.com","subject":"Q3 summary"}`)
	tk, err := h.Gate.Propose(ctx, call)
	require.NoError(t, err)
	h.Clock.Advance(12 * time.Second)
	_, err = h.Approve(tk.ID)
	require.NoError(t, err)
	_, err = h.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)
	_, err = h.Gate.Execute(ctx, tk.ID)
	require.ErrorIs(t, err, stepup.ErrConsumed)
	refund := call
	refund.Tool, refund.Args = "issue_refund", []byte(`{"order":"A-17","amount":900}`)
	_, err = h.Gate.Propose(ctx, refund)
	require.NoError(t, err)

	got, body := scrape(t, metrics.URL+gateway.MetricsPath)
	want := map[string]float64{
		`asu_gate_decisions_total{asu_decision=needs_approval,asu_effect_class=external}`:                  1,
		`asu_gate_decisions_total{asu_decision=approved,asu_effect_class=external}`:                        1,
		`asu_gate_decisions_total{asu_decision=deny,asu_effect_class=irreversible}`:                        1,
		`asu_gate_pending{asu_effect_class=external}`:                                                      0,
		`asu_gate_decision_duration_seconds_count{asu_decision=approved,asu_effect_class=external}`:        1,
		`asu_gate_decision_duration_seconds_sum{asu_decision=approved,asu_effect_class=external}`:          12,
		`asu_gate_executions_total{asu_effect_class=external,asu_execution_outcome=executed}`:              1,
		`asu_gate_executions_total{asu_effect_class=external,asu_execution_outcome=refused}`:               1,
		`asu_gate_decision_duration_seconds_bucket{asu_decision=approved,asu_effect_class=external,le=10}`: 0,
		`asu_gate_decision_duration_seconds_bucket{asu_decision=approved,asu_effect_class=external,le=20}`: 1,
	}
	for series, v := range want {
		if assert.Contains(t, got, series, body) {
			assert.Equal(t, v, got[series], series)
		}
	}
	for _, secret := range []string{"send_email", "issue_refund", "user:dana", "agent:reports", string(tk.ID),
		tk.Digest.Short(), "finance@example.com", "A-17"} {
		assert.NotContains(t, body, secret, "metrics name no tools, principals, tickets or arguments")
	}

	// Only GET /metrics answers there, and neither the agent API nor the
	// approval site serves it.
	for _, tt := range []struct {
		h      http.Handler
		method string
		path   string
		status int
	}{
		{m, http.MethodGet, "/", http.StatusNotFound},
		{m, http.MethodGet, "/v1/propose", http.StatusNotFound},
		{m, http.MethodPost, gateway.MetricsPath, http.StatusMethodNotAllowed},
		{api, http.MethodGet, gateway.MetricsPath, http.StatusNotFound},
		{site, http.MethodGet, gateway.MetricsPath, http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		tt.h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		assert.Equal(t, tt.status, rec.Code, "%T %s %s", tt.h, tt.method, tt.path)
	}
}

func TestMetricsOfTwoGatewaysStayApart(t *testing.T) {
	a, err := gateway.NewMetrics()
	require.NoError(t, err)
	b, err := gateway.NewMetrics()
	require.NoError(t, err, "no global registry: a second one does not collide")
	ha := stepuptest.NewGate(t, nil, gate.WithMeterProvider(a.MeterProvider()))
	stepuptest.NewGate(t, nil, gate.WithMeterProvider(b.MeterProvider()))
	_, err = ha.Gate.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	sa := httptest.NewServer(a)
	defer sa.Close()
	sb := httptest.NewServer(b)
	defer sb.Close()
	got, _ := scrape(t, sa.URL+gateway.MetricsPath)
	assert.Equal(t, 1.0, got[`asu_gate_pending{asu_effect_class=external}`])
	got, _ = scrape(t, sb.URL+gateway.MetricsPath)
	assert.NotContains(t, got, `asu_gate_pending{asu_effect_class=external}`)
}
