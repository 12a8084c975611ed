package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
)

// FuzzToolCall sends arbitrary JSON arguments through a real client. A
// call either runs exactly once, for the configured principal, with the
// arguments' canonical form (no arguments, or null, being the empty
// object), or is a tool error and runs nothing.
func FuzzToolCall(f *testing.F) {
	for _, s := range []string{`{}`, `{"query":"refunds"}`, `[]`, `"x"`, `null`, `{"a":{"b":[1,2.5,"c"]}}`,
		`{"principal":{"user":"user:mallory"}}`, `{"n":12345678901234567890}`, `{"a":1,"a":2}`} {
		f.Add("search_tickets", []byte(s))
		f.Add("send_email", []byte(s))
	}
	fx := newFixture(f, nil, nil, func(c *serverConfig) { c.WaitTimeout = 1 }) // pending calls give up at once
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		if !json.Valid(args) {
			return // the client cannot send it
		}
		before := len(fx.rec.recorded())
		res, err := fx.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			return // refused by the protocol layer (a tool name it cannot carry, say)
		}
		runs := fx.rec.recorded()
		switch {
		case res.IsError && len(runs) != before:
			t.Fatalf("a refused call ran: %s", resultText(res))
		case !res.IsError && len(runs) != before+1:
			t.Fatalf("an answered call ran %d times", len(runs)-before)
		case !res.IsError:
			r := runs[len(runs)-1]
			sent := args
			if string(bytes.TrimSpace(args)) == "null" {
				sent = []byte(`{}`) // no arguments: an empty object
			}
			want, err := canon.Canonicalize(sent)
			if err != nil {
				t.Fatalf("ran arguments canon refuses: %v", err)
			}
			if string(r.Effect.Args) != string(want) || r.Effect.Principal.User != dana.User || r.Effect.Principal.Agent != dana.Agent {
				t.Fatalf("ran %s for %+v", r.Effect.Args, r.Effect.Principal)
			}
		}
		for len(fx.pending) > 0 {
			<-fx.pending
		}
	})
}
