package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asGateway names the environment variable that makes this test binary
// run as the gateway command itself (TestMain calls main), so a benchmark
// can start the real program as a host would: over stdio, in its own
// process.
const asGateway = "ASU_MCP_TEST_AS_GATEWAY"

func TestMain(m *testing.M) {
	if os.Getenv(asGateway) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkAllowedReadStdio measures an allowed read_text_file of
// server-filesystem over stdio, the host a Go MCP client: "direct" to the
// server, "gateway" through this program in its own process (the host
// starts it, it starts the server). Each iteration makes one call of each,
// in alternating order, so both see the same machine; it reports the
// median of each and their ratio. Needs node and npm ci in e2e.
func BenchmarkAllowedReadStdio(b *testing.B) {
	node, err := exec.LookPath("node")
	server := "e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
	if _, serr := os.Stat(server); err != nil || serr != nil {
		b.Skip("needs node and npm ci in examples/mcp/e2e")
	}
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "q3.csv")
	if err := os.WriteFile(file, []byte("region,revenue\nwest,410\neast,385\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	connect := func(cmd *exec.Cmd) *mcp.ClientSession {
		cmd.Stderr = nil
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "v1"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	direct := connect(exec.Command(node, server, dir))
	gw := exec.Command(os.Args[0], "-catalog", "e2e/filesystem.catalog.json", "-root", dir,
		"-site-addr", "127.0.0.1:0", "-approver", "", "--", node, server, dir)
	gw.Env = append(os.Environ(), asGateway+"=1")
	gateway := connect(gw)

	call := func(cs *mcp.ClientSession) time.Duration {
		// Each side has its own params: a client writes its protocol
		// version into the params it sends.
		params := &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": file}}
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
		return d
	}
	for range 20 { // warm both up: first calls load code and fill caches
		call(direct)
		call(gateway)
	}
	var ds, gs []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			ds = append(ds, call(direct))
			gs = append(gs, call(gateway))
		} else {
			gs = append(gs, call(gateway))
			ds = append(ds, call(direct))
		}
		i++
	}
	d, g := median(ds), median(gs)
	b.ReportMetric(float64(d.Microseconds()), "direct-µs")
	b.ReportMetric(float64(g.Microseconds()), "gateway-µs")
	b.ReportMetric(float64(g)/float64(d), "ratio")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
