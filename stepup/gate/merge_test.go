package gate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// TestMergeOnlyIdenticalProposals: a duplicate merges into a pending
// ticket only when everything the card shows of it is the same; a
// duplicate that carries new provenance (taint), another rationale,
// another agent or delegation gets a ticket and a card of its own, so
// the signed card never omits what the agent read.
func TestMergeOnlyIdenticalProposals(t *testing.T) {
	ctx := context.Background()
	base := sendEmail("finance@example.com")
	base.Taint = []string{"read web page https://example.org/q3"}
	base.Rationale = "Finance asked for the Q3 numbers."
	variants := map[string]func(c *stepup.Call){
		"new taint":              func(c *stepup.Call) { c.Taint = append(c.Taint, "read mail from mallory@evil.net") },
		"taint reordered":        func(c *stepup.Call) { c.Taint = append([]string{"read file notes.txt"}, c.Taint...) },
		"taint dropped":          func(c *stepup.Call) { c.Taint = nil },
		"other rationale":        func(c *stepup.Call) { c.Rationale = "Urgent: the CFO asked." },
		"rationale with a space": func(c *stepup.Call) { c.Rationale += " " },
		"other agent":            func(c *stepup.Call) { c.Principal.Agent = "agent:billing" },
		"a delegation":           func(c *stepup.Call) { c.Principal.Delegations = []string{"agent:planner"} },
	}
	for name, vary := range variants {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			first, err := w.Gate.Propose(ctx, base)
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, first.Status)
			c := base
			c.Taint = append([]string(nil), base.Taint...)
			vary(&c)
			second, err := w.Gate.Propose(ctx, c)
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, second.Status)
			assert.NotEqual(t, first.ID, second.ID, "a different proposal is not merged")
		})
	}
	t.Run("identical", func(t *testing.T) {
		w := newWorld(t)
		first, err := w.Gate.Propose(ctx, base)
		require.NoError(t, err)
		again, err := w.Gate.Propose(ctx, reordered(base))
		require.NoError(t, err)
		assert.Equal(t, first.ID, again.ID, "the same proposal, keys reordered, merges")
	})
}
