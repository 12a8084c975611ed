package tooluse_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// kitTarget builds asu's in-process gate with every seed tool running
// through tools, behind a tool-use loop.
func kitTarget(naive bool) attackkit.Adapter {
	return func(t testing.TB, tools *attackkit.Tools) attackkit.Target {
		var opts []gate.Option
		for _, tool := range stepuptest.SeedTools() {
			opts = append(opts, gate.WithExecutor(tool.Name, tools))
		}
		policy := &adaptertest.Versioned{Policy: stepuptest.SeedCatalog()}
		h := stepuptest.NewGate(t, policy, opts...)
		l := newToolLoop(h.Gate, tools, naive)
		people := attackkit.NewDesk(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), h.Clock.Now)
		tg := l.target(people, func(d time.Duration) { h.Clock.Advance(d) })
		tg.ChangePolicy, tg.AgentView = policy.Change, l.view
		return tg
	}
}

// TestAttackKit runs the whole catalogue through the tooluse core: every
// attack runs and holds.
func TestAttackKit(t *testing.T) {
	rep := attackkit.Run(t, kitTarget(false))
	for _, r := range rep.Results {
		assert.Equal(t, attackkit.Held, r.Outcome, "%s / %s: %s", r.Property, r.Attack, r.Detail)
	}
}

// TestAttackKitCatchesNaiveResume shows the same loop, resuming by
// running the request it checkpointed instead of the ticket, breaks
// effect binding: the kit bites through this loop.
func TestAttackKitCatchesNaiveResume(t *testing.T) {
	rep := attackkit.Assess(t, kitTarget(true))
	assert.Equal(t, attackkit.Broken, rep.Outcome(attackkit.P2))
}
