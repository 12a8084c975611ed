package attackkit_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// harness builds a gate with the seed catalog whose tools all run
// through tools.
func harness(t testing.TB, tools *attackkit.Tools) *stepuptest.Harness {
	h, _ := versionedHarness(t, tools)
	return h
}

// versionedHarness is harness with a way to deploy a new version of its
// policy.
func versionedHarness(t testing.TB, tools *attackkit.Tools) (*stepuptest.Harness, func(context.Context) error) {
	var opts []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, tools))
	}
	p := &versioned{Policy: stepuptest.SeedCatalog()}
	return stepuptest.NewGate(t, p, opts...), p.change
}

// versioned is a policy whose version an operator bumps: the same rules,
// a new version, as a redeployed catalog has.
type versioned struct {
	plug.Policy
	rev atomic.Int64
}

func (p *versioned) Decide(ctx context.Context, prop plug.Proposal) (plug.Decision, error) {
	d, err := p.Policy.Decide(ctx, prop)
	if err == nil {
		d.PolicyVersion += fmt.Sprintf("+r%d", p.rev.Load())
	}
	return d, err
}

func (p *versioned) change(context.Context) error {
	p.rev.Add(1)
	return nil
}

func advance(h *stepuptest.Harness) func(time.Duration) {
	return func(d time.Duration) { h.Clock.Advance(d) }
}

func desk(h *stepuptest.Harness) *attackkit.Desk {
	return attackkit.NewDesk(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), h.Clock.Now)
}

// inProcess is asu's in-process gate behind a framework loop.
func inProcess(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	h, change := versionedHarness(t, tools)
	tg := newLoop(h.Gate).target(desk(h), advance(h))
	tg.ChangePolicy = change
	return tg
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
