package main

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAllowedCall measures an allowed read_file on the built-in
// upstream: "upstream" calls it directly (the baseline), "gateway" makes
// the same call through the gateway (propose, execute, the upstream
// call), so the difference is what the gate adds.
func BenchmarkAllowedCall(b *testing.B) {
	ctx := context.Background()
	// Each side has its own params: a client writes its protocol version
	// into the params it sends.
	params := func() *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "q3.csv"}}
	}
	b.Run("upstream", func(b *testing.B) {
		seed, err := newSeedServer(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(ctx, seed.dial(), nil)
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
		cs, _, _, stop := start(b, defaults())
		defer stop()
		params := params()
		for b.Loop() {
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatalf("call: %v", err)
			}
		}
	})
}
