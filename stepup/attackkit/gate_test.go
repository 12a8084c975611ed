package attackkit_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// harness builds a gate with the seed catalog whose tools all run
// through tools.
func harness(t testing.TB, tools *attackkit.Tools) *stepuptest.Harness {
	var opts []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, tools))
	}
	return stepuptest.NewGate(t, nil, opts...)
}

func advance(h *stepuptest.Harness) func(time.Duration) {
	return func(d time.Duration) { h.Clock.Advance(d) }
}

func desk(h *stepuptest.Harness) *attackkit.Desk {
	return attackkit.NewDesk(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), h.Clock.Now)
}

// inProcess is asu's in-process gate behind a framework loop.
func inProcess(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	h := harness(t, tools)
	return newLoop(h.Gate).target(desk(h), advance(h))
}

// overHTTP is the remote client of the agent API behind a framework loop,
// the gate serving it over HTTP.
func overHTTP(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	h := harness(t, tools)
	const token = "kit-runtime-token-0123456789abcdefghijklmnop"
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
		{Token: token, Agent: attackkit.Agent, Users: []string{attackkit.User, attackkit.Stranger}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, token, srv.Client())
	require.NoError(t, err)
	return newLoop(client).target(desk(h), advance(h))
}

func TestInProcessGate(t *testing.T) {
	rep := attackkit.Run(t, inProcess)
	assertAllHeld(t, rep)
}

func TestRemoteClient(t *testing.T) {
	rep := attackkit.Run(t, overHTTP)
	assertAllHeld(t, rep)
}

// assertAllHeld requires every attack to have run and held: asu's
// runtimes offer every path the kit attacks.
func assertAllHeld(t *testing.T, rep attackkit.Report) {
	t.Helper()
	for p := attackkit.P1; p <= attackkit.P7; p++ {
		assert.Equal(t, attackkit.Held, rep.Outcome(p), p.String())
	}
	for _, r := range rep.Results {
		assert.Equal(t, attackkit.Held, r.Outcome, "%s / %s: %s", r.Property, r.Attack, r.Detail)
	}
}
