package mcpgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// TestExecutorSendsNoFoldedTwins: whatever policy approved them, the
// upstream executor never sends arguments holding, in one object at any
// depth, two keys a server may read as one (case, the long s, the Kelvin
// sign, '_' and '-'); plain arguments go through (the control).
func TestExecutorSendsNoFoldedTwins(t *testing.T) {
	w := newWorld(t)
	exec := w.up.Executor()
	ctx := context.Background()
	twins := [][2]string{{"to", "To"}, {"to", "TO"}, {"address", "addreſs"}, {"kind", "Kind"}, {"kind", "\u212aind"},
		{"cc_list", "cc-list"}, {"cc_list", "cclist"}}
	for i, tw := range twins {
		for depth := range 3 {
			inner := fmt.Sprintf(`{%q:"ops@example.com",%q:"mallory@evil.example"}`, tw[0], tw[1])
			for range depth {
				inner = `{"nested":` + inner + `}`
			}
			_, err := exec.Execute(ctx, canon.Effect{Tool: "send_email", Args: json.RawMessage(inner)},
				fmt.Sprintf("key-%d-%d", i, depth))
			assert.ErrorIs(t, err, mcpgate.ErrAmbiguousArgs, "%q and %q at depth %d", tw[0], tw[1], depth)
		}
	}
	w.upstream.mu.Lock()
	sent := len(w.upstream.calls)
	w.upstream.mu.Unlock()
	assert.Zero(t, sent, "the upstream received ambiguous arguments")

	_, err := exec.Execute(ctx, canon.Effect{Tool: "send_email", Args: json.RawMessage(`{"to":"ops@example.com"}`)}, "plain")
	require.NoError(t, err)
	w.upstream.mu.Lock()
	defer w.upstream.mu.Unlock()
	assert.Len(t, w.upstream.calls, 1)
}
