package mcpgate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// FuzzHostArguments sends arbitrary arguments from the host through the
// proxy and the gate. Whatever arrives, nothing panics; a call that needs
// a person never runs without one; an allowed call that runs reaches the
// upstream with exactly the arguments the gate hashed.
func FuzzHostArguments(f *testing.F) {
	for _, s := range []string{`{"path":"a.txt"}`, `{}`, `null`, `[]`, `"x"`, `{"path":"a.txt","path":"b.txt"}`,
		`{"path":9007199254740993}`, `{"path":"\ud800"}`, `{"path":"../../etc/passwd"}`, `{"path":"a.txt","content":"x"}`,
		`{"path":1e400}`, `{"a":{"b":{"c":{"d":[[[[[]]]]]}}}}`} {
		f.Add(s)
	}
	w := newWorld(f, func(o *mcpgate.Options, _ *mcpgate.UpstreamOptions) { o.WaitTimeout = time.Millisecond })
	h := w.connect(hostOptions{})
	if err := writeFile(w.dir, "a.txt", "A"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) {
			t.Skip("the host's SDK sends only JSON")
		}
		ctx := context.Background()
		before := w.upstream.count("read_file")
		res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: json.RawMessage(args)})
		if err != nil {
			return // refused at the protocol level (arguments not an object)
		}
		after := w.upstream.count("read_file")
		switch {
		case after > before+1:
			t.Fatalf("one call ran %d times", after-before)
		case after == before+1:
			w.upstream.mu.Lock()
			got := w.upstream.args[len(w.upstream.args)-1]
			w.upstream.mu.Unlock()
			want, err := canon.Canonicalize(json.RawMessage(args))
			if err != nil {
				t.Fatalf("ran arguments the gate cannot hash: %v", err)
			}
			gotC, err := canon.Canonicalize(got)
			if err != nil || string(gotC) != string(want) {
				t.Fatalf("upstream got %s, the gate hashed %s", got, want)
			}
		case !res.IsError:
			t.Fatalf("a call that did not run answered as a success: %s", resultText(res))
		}
		wrote := w.upstream.count("write_file")
		if _, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: json.RawMessage(args)}); err == nil &&
			w.upstream.count("write_file") != wrote {
			t.Fatal("a call that needs a person ran without one")
		}
	})
}

// FuzzParseCatalog: any file either parses into a catalog the policy
// accepts or refuses, or is refused with a *CatalogError; nothing panics.
func FuzzParseCatalog(f *testing.F) {
	f.Add(testCatalog)
	f.Add(`{"version":"v","tools":[{"name":"a","class":"read","timeout":{"after":"1s","outcome":"alternative","alternative":"b"}}]}`)
	f.Add(`{"version":"v","tools":[{"name":"a","class":"read","allow_domains":{"to":["x"]},"max_amount":{"n":1e308}}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := mcpgate.ParseCatalog(strings.NewReader(doc))
		if err != nil {
			var ce *mcpgate.CatalogError
			if !errors.As(err, &ce) || !errors.Is(err, mcpgate.ErrCatalog) {
				t.Fatalf("refusal without a CatalogError: %v", err)
			}
			if ce.Line < 0 || ce.Line > strings.Count(doc, "\n")+1 {
				t.Fatalf("line %d outside the file", ce.Line)
			}
			return
		}
		_, _ = c.Policy(nil)
	})
}
