package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemo runs -demo and checks each step's outcome as printed.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, demo(context.Background(), &out))
	text := out.String()
	for _, want := range []string{
		"send_email: upstream suggests reversible; the catalog says external (kept)",
		"run_shell: upstream suggests read; not in the catalog, so every call is denied",
		`model reads (result): {"digest":`,
		"[approver] approves with her passkey",
		"model reads (tool error): denied: unknown tool",
		"LOOKS LIKE a trusted domain",
		"model reads (tool error): denied by user:dana: that is not our domain",
	} {
		assert.Contains(t, text, want)
	}
	m := regexp.MustCompile(`new ticket (\S+) \(digest (\w+)\), not the approved (\S+) \(digest (\w+)\)`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	assert.NotEqual(t, m[1], m[3])
	assert.NotEqual(t, m[2], m[4])
	executions := text[strings.Index(text, "executions the tools saw"):]
	assert.Equal(t, 1, strings.Count(executions, "read_file for user:dana by agent:mcp"))
	assert.Equal(t, 1, strings.Count(executions, "send_email for user:dana by agent:mcp"))
	assert.Equal(t, 2, strings.Count(executions, ", key "))
	assert.NotContains(t, text, "/approve/", "an approval link was printed where the model reads")
}

// TestServe runs the command's server mode over an in-memory transport
// (stdio in production): the approval site starts, the enrollment and
// approval links go to the log, never to the model, and calls are gated.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	log := &syncWriter{w: &logs}
	st, ct := mcp.NewInMemoryTransports()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	o := options{siteAddr: "127.0.0.1:0", user: "user:dana", agent: "agent:mcp", task: "t-1",
		approver: "user:dana", wait: 20 * time.Millisecond}
	go func() { done <- serve(ctx, o, st, log, func(origin string) { ready <- origin }) }()
	var origin string
	select {
	case origin = <-ready:
	case err := <-done:
		t.Fatalf("serve did not start: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0.1.0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	require.NoError(t, err)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "q3.csv"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, resultText(res))

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_email", Arguments: email("finance@example.com")})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "not run: no decision in time", resultText(res))

	require.NoError(t, cs.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop when the client hung up")
	}
	text := logs.String()
	assert.Contains(t, text, "enrollment link for user:dana (works once): "+origin+"/enroll?invite=")
	assert.Regexp(t, regexp.QuoteMeta("approval needed: "+origin+"/approve/")+`\S+`, text)
	assert.Contains(t, text, "run_shell: upstream suggests read")
}
