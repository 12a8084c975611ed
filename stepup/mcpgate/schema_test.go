package mcpgate_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/mcpgate"
)

// relaxedReadFile is read_file as the upstream lists it later: "path" no
// longer required, a "glob" argument added. The gate still checks the
// schema it was built with.
const relaxedReadFile = `{"type":"object","properties":{"path":{"type":"string"},"glob":{"type":"string"}}}`

// shownSchema lists the host's tools until read_file's schema satisfies
// done, and returns it.
func shownSchema(t *testing.T, h *host, done func(string) bool) string {
	t.Helper()
	var got string
	require.Eventually(t, func() bool {
		res, err := h.cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		for _, tool := range res.Tools {
			if tool.Name == "read_file" {
				b, err := json.Marshal(tool.InputSchema)
				require.NoError(t, err)
				got = string(b)
			}
		}
		return done(got)
	}, 5*time.Second, 20*time.Millisecond)
	return got
}

// relax makes the upstream list read_file with relaxedReadFile, and
// waits until the gateway's upstream connection has read the change and
// the proxy has offered its new listing to h.
func relax(t *testing.T, w *world, h *host) {
	h.mu.Lock()
	seen := h.listChanged
	h.mu.Unlock()
	defer func() {
		require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.listChanged > seen },
			5*time.Second, 10*time.Millisecond, "the host is told the list changed")
	}()
	w.upstream.server.AddTool(&mcp.Tool{Name: "read_file", Description: "Read files, or a glob of them.",
		InputSchema: json.RawMessage(relaxedReadFile)}, w.upstream.readFile)
	require.Eventually(t, func() bool {
		for _, u := range w.up.Tools() {
			if u.Name == "read_file" {
				b, _ := json.Marshal(u.InputSchema)
				return sameSchema(string(b), relaxedReadFile)
			}
		}
		return false
	}, 5*time.Second, 20*time.Millisecond, "the upstream's new listing reaches the gateway")
}

func sameSchema(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && assert.ObjectsAreEqual(x, y)
}

// TestHostSeesTheEnforcedSchema: after the upstream relaxes a tool's
// schema (tools/list_changed), the host is still shown the schema the
// gate enforces, so the model is not led into calls the gate refuses; the
// call the relaxed schema allows is denied by the gate, which is what a
// host shown the upstream's schema would have met for every such call.
func TestHostSeesTheEnforcedSchema(t *testing.T) {
	w := newWorld(t)
	h := w.connect(hostOptions{urlElicitation: true})
	before := shownSchema(t, h, func(s string) bool { return s != "" })
	assert.Contains(t, before, `"required":["path"]`)

	relax(t, w, h)
	after := shownSchema(t, h, func(string) bool { return true })
	assert.True(t, sameSchema(before, after), "shown %s after the change", after)
	assert.NotContains(t, after, "glob")

	out, isErr := h.call(t, context.Background(), "read_file", `{"glob":"*.csv"}`)
	assert.True(t, isErr)
	assert.Equal(t, "denied: arguments do not match the tool's schema", out)
	assert.Zero(t, w.upstream.count("read_file"))
}

// TestHostSeesTheSchemaEnforcedByPolicy: with Options.EnforcedSchema the
// host is shown the gate's own schema from the first listing on, a
// catalog's replacement schema included, and the upstream's for a tool
// the gate does not admit.
func TestHostSeesTheSchemaEnforcedByPolicy(t *testing.T) {
	strict := `{"type":"object","required":["path"],"properties":{"path":{"type":"string","maxLength":64}},"additionalProperties":false}`
	w := newWorld(t, func(o *mcpgate.Options, _ *mcpgate.UpstreamOptions) {
		o.EnforcedSchema = func(tool string) (json.RawMessage, bool) {
			switch tool {
			case "read_file":
				return json.RawMessage(strict), true
			case "run_shell":
				return nil, false
			}
			return nil, true
		}
	})
	h := w.connect(hostOptions{urlElicitation: true})
	got := shownSchema(t, h, func(s string) bool { return s != "" })
	assert.True(t, sameSchema(strict, got), got)
	relax(t, w, h)
	got = shownSchema(t, h, func(string) bool { return true })
	assert.True(t, sameSchema(strict, got), got)

	res, err := h.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range res.Tools {
		if tool.Name == "run_shell" {
			b, _ := json.Marshal(tool.InputSchema)
			assert.Contains(t, string(b), "command", "a tool the gate does not admit keeps the upstream's")
		}
	}
}
