package mcpgate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/mcpgate"
)

// stdioServerEnv names the way the test binary, run as an upstream stdio
// server by TestUpstreamStdioServer, ends a tools/call; stdioMarkEnv the
// file it writes its effect to first.
const (
	stdioServerEnv = "ASU_MCPGATE_STDIO_SERVER"
	stdioMarkEnv   = "ASU_MCPGATE_STDIO_MARK"
)

// TestUpstreamStdioServer is not a test: run with stdioServerEnv set, the
// test binary is a line-delimited JSON-RPC MCP server of one tool, send,
// which records its effect and then ends the call as the variable says.
func TestUpstreamStdioServer(t *testing.T) {
	mode := os.Getenv(stdioServerEnv)
	if mode == "" {
		t.Skip("run as an upstream server by TestUpstreamLostMidCallMayHaveRun")
	}
	in, out := bufio.NewScanner(os.Stdin), json.NewEncoder(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		answer := func(k string, v any) { _ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, k: v}) }
		switch m.Method {
		case "initialize":
			answer("result", map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "stdio", "version": "1"}})
		case "tools/list":
			answer("result", map[string]any{"tools": []any{map[string]any{"name": "send", "inputSchema": map[string]any{"type": "object"}}}})
		case "tools/call":
			if mode == "refuse" { // a protocol answer: nothing ran
				answer("error", map[string]any{"code": -32602, "message": "refused"})
				continue
			}
			f, _ := os.OpenFile(os.Getenv(stdioMarkEnv), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			_, _ = f.WriteString("sent\n")
			_ = f.Close()
			switch mode {
			case "exit":
				os.Exit(1)
			case "close stdout":
				_ = os.Stdout.Close()
				time.Sleep(2 * time.Second)
			case "garbage, then exit":
				_, _ = os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"id\":\n")
				os.Exit(3)
			}
		default:
			answer("result", map[string]any{})
		}
	}
}

// TestUpstreamLostMidCallMayHaveRun: an upstream command whose connection
// ends while a call is in its hands (it exits, closes its output, breaks
// the stream), after its effect, is a call that may have run, never a
// plain failure; one that answers with a protocol error refused it.
func TestUpstreamLostMidCallMayHaveRun(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	for _, mode := range []string{"exit", "close stdout", "garbage, then exit", "refuse"} {
		t.Run(mode, func(t *testing.T) {
			mark := t.TempDir() + "/effect"
			t.Setenv(stdioServerEnv, mode)
			t.Setenv(stdioMarkEnv, mark)
			up, err := mcpgate.Connect(context.Background(), mcpgate.Command(nil, self, "-test.run=^TestUpstreamStdioServer$"),
				&mcpgate.UpstreamOptions{CallTimeout: 10 * time.Second})
			require.NoError(t, err)
			defer up.Close()
			_, err = up.Call(context.Background(), "send", json.RawMessage(`{}`))
			effect, _ := os.ReadFile(mark)
			if mode == "refuse" {
				assert.ErrorIs(t, err, mcpgate.ErrUpstreamFailed)
				assert.Empty(t, effect)
				return
			}
			assert.Equal(t, "sent\n", string(effect), "the effect happened")
			assert.ErrorIs(t, err, mcpgate.ErrUpstreamLost, "the call may have run")
			assert.NotErrorIs(t, err, mcpgate.ErrUpstreamFailed)
		})
	}
}
