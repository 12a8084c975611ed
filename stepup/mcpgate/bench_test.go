package mcpgate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAllowedRead measures an allowed read_file: "upstream" is the
// host calling the fake server directly (the baseline), "gateway" the same
// call through the proxy and the gate (propose, audit, consume, the
// upstream call), so the difference is what gating adds per call.
func BenchmarkAllowedRead(b *testing.B) {
	ctx := context.Background()
	// Each side has its own params: a client writes its protocol version
	// into the params it sends.
	params := func() *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}
	}
	w := newWorld(b)
	if err := writeFile(w.dir, "a.txt", "A"); err != nil {
		b.Fatal(err)
	}
	b.Run("upstream", func(b *testing.B) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(ctx, w.upstream.dial(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := params()
		for b.Loop() {
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatalf("call: %v", err)
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		h := w.connect(hostOptions{})
		params := params()
		for b.Loop() {
			if res, err := h.cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatalf("call: %v", err)
			}
		}
	})
}
