package eino_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func kitTarget(t testing.TB, tools *attackkit.Tools) attackkit.Target {
	return target(t, tools, nil)
}

// target builds the seed catalog on asu's in-process gate behind an Eino
// graph of the adapter's wrapped tools, or of the tools naive makes.
func target(t testing.TB, tools *attackkit.Tools, naive func(g *tooluse.Gate, rt stepup.Runtime, name string) tool.BaseTool) attackkit.Target {
	var opts []gate.Option
	var names []string
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, tools))
		names = append(names, tool.Name)
	}
	policy := &adaptertest.Versioned{Policy: stepuptest.SeedCatalog()}
	h := stepuptest.NewGate(t, policy, opts...)
	wrap := wrapper(gatedTool)
	if naive != nil {
		wrap = func(g *tooluse.Gate, name string) tool.BaseTool { return naive(g, h.Gate, name) }
	}
	l, err := newEinoLoop(h.Gate, wrap, names...)
	require.NoError(t, err)
	people := attackkit.NewDesk(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), h.Clock.Now)
	tg := l.target(people, func(d time.Duration) { h.Clock.Advance(d) })
	tg.ChangePolicy = policy.Change
	return tg
}

// TestAttackKit runs the catalogue against an Eino graph of gated tools
// with a checkpoint store. Substitution by a resumer edits the
// checkpoint's bytes between approval and resume; what runs is still what
// was approved. Attacks through paths this loop does not model (a hook,
// the history, resubmission, the chat) are skipped with their reason.
func TestAttackKit(t *testing.T) {
	rep := attackkit.Run(t, kitTarget)
	for _, r := range rep.Results {
		assert.NotEqual(t, attackkit.Broken, r.Outcome, "%s / %s: %s", r.Property, r.Attack, r.Detail)
		if r.Attack == "substitution by a resumer" {
			assert.Equal(t, attackkit.Held, r.Outcome, "the checkpoint attack ran")
		}
	}
}

// TestAttackKitCatchesNaiveResume runs the resumer's substitution against
// the tutorial's tool: editing the checkpoint changes what runs, so the
// kit's checkpoint hook reaches what Eino hands a resumed tool.
func TestAttackKitCatchesNaiveResume(t *testing.T) {
	rep := attackkit.Assess(t, func(t testing.TB, tools *attackkit.Tools) attackkit.Target {
		return target(t, tools, func(g *tooluse.Gate, rt stepup.Runtime, name string) tool.BaseTool {
			return &naiveTool{name: name, g: g, rt: rt, tools: tools}
		})
	})
	for _, r := range rep.Results {
		if r.Attack == "substitution by a resumer" {
			assert.Equal(t, attackkit.Broken, r.Outcome, r.Detail)
		}
	}
}
