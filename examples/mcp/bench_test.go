package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/stepup"
)

// BenchmarkAllowedCall measures an allowed read_file: "gate" proposes and
// executes on the gate directly (the baseline), "mcp" makes the same call
// as a tools/call from a go-sdk client over in-memory transports, so the
// difference is what the MCP layer adds.
func BenchmarkAllowedCall(b *testing.B) {
	ctx := context.Background()
	args := map[string]any{"path": "q3.csv"}
	b.Run("gate", func(b *testing.B) {
		f := newFixture(b, nil, nil, nil)
		raw, _ := json.Marshal(args)
		c := stepup.Call{Tool: "read_file", Args: raw, Task: "t-42", Session: "s-1", Principal: dana}
		for b.Loop() {
			tk, err := f.h.Gate.Propose(ctx, c)
			if err != nil || tk.Status != stepup.StatusAllowed {
				b.Fatalf("propose: %v %s", err, tk.Status)
			}
			if _, err := f.h.Gate.Execute(ctx, tk.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		f := newFixture(b, nil, nil, nil)
		params := &mcp.CallToolParams{Name: "read_file", Arguments: args}
		for b.Loop() {
			res, err := f.cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatalf("call: %v", err)
			}
		}
	})
}
