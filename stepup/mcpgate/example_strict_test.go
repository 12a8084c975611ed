package mcpgate_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// ExampleProxy_Run serves the proxy on newline-delimited JSON (stdio in
// production, pipes here) and shows a request naming "name" twice refused
// with a JSON-RPC error before the SDK, which would take the last, reads it.
func ExampleProxy_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up, err := mcpgate.Connect(ctx, exampleUpstream(), nil)
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
		&mcpgate.Options{EnforcedSchema: pol.Schema})
	if err != nil {
		log.Fatal(err)
	}
	hostR, proxyW := io.Pipe()
	proxyR, hostW := io.Pipe()
	go func() { _ = proxy.Run(ctx, &mcp.IOTransport{Reader: proxyR, Writer: proxyW}) }()
	answers := bufio.NewScanner(hostR)
	send := func(line string) string {
		if _, err := io.WriteString(hostW, line+"\n"); err != nil {
			log.Fatal(err)
		}
		answers.Scan()
		return answers.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`)
	if _, err := io.WriteString(hostW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_note","name":"delete_notes"}}`))
	// Output:
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: a member is named twice in one object (exactly, or in two letter cases); the message was not read"}}
}
