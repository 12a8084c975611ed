package mcpgate_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// An upstream server in this process, for the examples: one read tool
// that claims nothing, one write tool that claims to be read-only.
func exampleUpstream() mcpgate.Dialer {
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "get_note", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "buy milk"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "delete_notes", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		})
	return func() mcp.Transport {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			log.Fatal(err)
		}
		return ct
	}
}

// ExampleNewProxy puts a gate in this process in front of an upstream
// server and calls its tools as a host would: the admitted read runs, the
// tool the catalog does not admit is denied, whatever it claims.
func ExampleNewProxy() {
	ctx := context.Background()
	up, err := mcpgate.Connect(ctx, exampleUpstream(), nil) // or mcpgate.Command(os.Stderr, "npx", ...)
	if err != nil {
		log.Fatal(err)
	}
	defer up.Close()
	cat, err := mcpgate.ParseCatalog(strings.NewReader(`{"version":"v1","tools":[{"name":"get_note","class":"read"}]}`))
	if err != nil {
		log.Fatal(err)
	}
	pol, err := cat.Policy(up.Tools())
	if err != nil {
		log.Fatal(err)
	}
	st := memory.New(nil)
	g, err := gate.New(st, pol, stepuptest.Passkeys(st), gate.WithExecutor("get_note", up.Executor()))
	if err != nil {
		log.Fatal(err)
	}
	proxy, err := mcpgate.NewProxy(g, canon.Principal{User: "user:dana", Agent: "agent:notes"}, up, cat.Class,
		&mcpgate.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// A host: over stdio, proxy.Run(ctx, &mcp.StdioTransport{});
	// over HTTP, proxy.HTTPHandler(token). Here, in memory.
	st1, st2 := mcp.NewInMemoryTransports()
	if _, err := proxy.Server().Connect(ctx, st1, nil); err != nil {
		log.Fatal(err)
	}
	host, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(ctx, st2, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer host.Close()
	for _, tool := range []string{"get_note", "delete_notes"} {
		res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: error=%v %s\n", tool, res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// get_note: error=false buy milk
	// delete_notes: error=true denied: unknown tool
}

// ExampleParseCatalog shows a refusal: it names the line at fault.
func ExampleParseCatalog() {
	_, err := mcpgate.ParseCatalog(strings.NewReader(`{
  "version": "v1",
  "tools": [
    {"name": "write_file", "class": "harmless"}
  ]
}`))
	fmt.Println(err)
	// Output:
	// catalog:4:37: /tools/0/class: value must be one of 'read', 'reversible', 'external', 'irreversible'
}

// ExampleStarterCatalog prints a catalog to start from: every tool
// irreversible, the worst case, until the integrator says otherwise.
func ExampleStarterCatalog() {
	raw, err := mcpgate.StarterCatalog("v1", []*mcp.Tool{{Name: "delete_notes",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}}, false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(raw))
	// Output:
	// {
	//   "version": "v1",
	//   "tools": [
	//     {
	//       "name": "delete_notes",
	//       "class": "irreversible"
	//     }
	//   ]
	// }
}

// ExampleSuggestClass reads upstream hints the worst way they allow.
func ExampleSuggestClass() {
	no, yes := false, true
	fmt.Println(mcpgate.SuggestClass(nil))
	fmt.Println(mcpgate.SuggestClass(&mcp.ToolAnnotations{ReadOnlyHint: true}))
	fmt.Println(mcpgate.SuggestClass(&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}))
	fmt.Println(mcpgate.SuggestClass(&mcp.ToolAnnotations{DestructiveHint: &no}))
	// Output:
	// irreversible
	// read
	// irreversible
	// external
}

// ExampleProbe checks at start-up that the gate accepts the principal.
func ExampleProbe() {
	st := memory.New(nil)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(mcpgate.Probe(context.Background(), g, canon.Principal{User: "user:dana", Agent: "agent:notes"}))
	// Output:
	// <nil>
}
