package attackkit_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gate"
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

// TestInProcessGate runs the catalogue against asu's gate in process and
// requires every goroutine it started to be gone once the subtests have
// cleaned up their integrations.
func TestInProcessGate(t *testing.T) {
	before := runtime.NumGoroutine()
	rep := attackkit.Run(t, inProcess)
	assertAllHeld(t, rep)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left behind")
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
