package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// status GETs u and returns the status and body.
func status(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestMetricsFlagServesPrometheusOnItsOwnListener(t *testing.T) {
	var logs bytes.Buffer
	p := startGateway(t, options{metrics: "127.0.0.1:0", log: &syncWriter{w: &logs}})
	require.NotEmpty(t, p.MetricsURL)
	assert.Contains(t, p.printed(), "metrics:       "+p.MetricsURL)

	client, err := remote.NewClient(p.AgentURL, p.Token, nil)
	require.NoError(t, err)
	tk, err := client.Propose(context.Background(), stepup.Call{Tool: "send_email",
		Args:    json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary","attachment":"q3.csv"}`),
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)

	code, body := status(t, p.MetricsURL)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `asu_gate_decisions_total{asu_decision="needs_approval",asu_effect_class="external"} 1`)
	assert.Contains(t, body, `asu_gate_pending{asu_effect_class="external"} 1`)
	assert.NotContains(t, body, "finance@example.com")

	// The approval figures, as a page and as JSON, on the same listener.
	figures := strings.TrimSuffix(p.MetricsURL, gateway.MetricsPath) + gateway.FiguresPath
	code, body = status(t, figures+".json")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"by_class":{"external":{"requests":1`)
	code, body = status(t, figures)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `data-label="class">external</th><td data-label="requests">1</td>`)
	assert.Contains(t, body, "the last 7 days")

	// Neither the agent API nor the approval site serves them.
	for _, base := range []string{p.AgentURL, p.SiteURL} {
		for _, path := range []string{"/metrics", gateway.FiguresPath, gateway.FiguresPath + ".json"} {
			code, body := status(t, base+path)
			assert.NotEqual(t, http.StatusOK, code, base+path)
			assert.NotContains(t, body, "asu_gate_", base)
			assert.NotContains(t, body, "approval rate", base)
		}
	}
	p.stop(t)
	assert.Contains(t, logs.String(), "gate decision", "the gate logs its decisions to the service log")
	assert.NotContains(t, logs.String(), "finance@example.com")
}

func TestMetricsOffByDefault(t *testing.T) {
	p := startGateway(t, options{})
	assert.Empty(t, p.MetricsURL)
	assert.NotContains(t, p.printed(), "metrics:")
}

func TestMetricsRefuseTheOtherListenersAddress(t *testing.T) {
	for _, o := range []options{
		{agentAddr: "127.0.0.1:8700", siteAddr: "127.0.0.1:8701", metrics: "127.0.0.1:8700"},
		{agentAddr: "127.0.0.1:8700", siteAddr: "127.0.0.1:8701", metrics: "127.0.0.1:8701"},
	} {
		_, ln, _, err := listenMetrics(o, io.Discard)
		require.Error(t, err)
		assert.Nil(t, ln)
		assert.True(t, strings.Contains(err.Error(), "listener of their own"), err.Error())
	}
}
