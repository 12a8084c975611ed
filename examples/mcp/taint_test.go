package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/policy"
)

// A read brings content nobody vetted to the model, so it taints its MCP
// session: an external tool the integrator lets run unattended runs at once
// in a fresh session, but after a read in the same session it waits for a
// person, and the card says what was read. Another session stays clean.
func TestReadsTaintTheirSession(t *testing.T) {
	upstream := append(seedUpstream(), &mcp.Tool{Name: "post_status", Description: "Post a status update.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)})
	entries := append(seedEntries(), policy.Tool{Name: "post_status", Title: "Post a status update",
		Class: card.ClassExternal, Unattended: true})
	f := newFixture(t, upstream, entries, nil)
	status := &mcp.CallToolParams{Name: "post_status", Arguments: map[string]any{"text": "Q3 is out"}}

	res := call(t, f.cs, status)
	require.False(t, res.IsError, resultText(res))
	assert.Empty(t, f.pending, "an untainted session needed a person")

	res = call(t, f.cs, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "q3.csv"}})
	require.False(t, res.IsError, resultText(res))

	ch := callAsync(f.cs, "post_status", map[string]any{"text": "Q3 is out"})
	tk := f.next(t)
	p, err := f.h.Gate.Desk().Prompt(context.Background(), tk.ID)
	require.NoError(t, err)
	assert.Contains(t, p.Card.Text(), "read the output of read_file")
	_, err = f.h.Approve(tk.ID)
	require.NoError(t, err)
	res = result(t, ch)
	assert.False(t, res.IsError, resultText(res))

	other := f.connect(t)
	res = call(t, other, status)
	assert.False(t, res.IsError, resultText(res))
	assert.Empty(t, f.pending, "the taint of one session reached another")
}
