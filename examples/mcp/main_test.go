package main

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/mcpgate"
)

// TestDemo runs -demo and checks each step's outcome as printed.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, demo(context.Background(), &out))
	text := out.String()
	for _, want := range []string{
		"send_email: upstream suggests reversible; the catalog says external (kept)",
		"run_shell: upstream suggests read; not in the catalog, so every call is denied",
		`model reads (result): {"tool":"send_email","done":true`,
		"[approver] approves with her passkey",
		"model reads (tool error): denied: unknown tool",
		"LOOKS LIKE a trusted domain",
		"model reads (tool error): denied by user:dana: that is not our domain",
		`"path" "q3.csv", which is "`,
		"bytes, SHA-256",
	} {
		assert.Contains(t, text, want)
	}
	m := regexp.MustCompile(`new ticket (\S+) \(digest (\w+)\), not the approved (\S+) \(digest (\w+)\)`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	assert.NotEqual(t, m[1], m[3])
	assert.NotEqual(t, m[2], m[4])
	calls := text[strings.Index(text, "calls the upstream server received"):]
	assert.Equal(t, 1, strings.Count(calls, "read_file "))
	assert.Equal(t, 1, strings.Count(calls, "send_email "))
	assert.NotContains(t, calls, "exarnple")
	assert.NotContains(t, text, "/approve/", "an approval link was printed where the model reads")
}

// start runs the gateway with o on the built-in upstream and returns a
// host session, the log and a function that hangs up and waits.
func start(t testing.TB, o options) (*mcp.ClientSession, *bytes.Buffer, ready, func()) {
	t.Helper()
	return startClient(t, o, nil)
}

// startClient is start with a host of these client options.
func startClient(t testing.TB, o options, copts *mcp.ClientOptions) (*mcp.ClientSession, *bytes.Buffer, ready, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	log := &syncWriter{w: &logs}
	st, ct := mcp.NewInMemoryTransports()
	readyc := make(chan ready, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, o, st, log, func(r ready) { readyc <- r }) }()
	var r ready
	select {
	case r = <-readyc:
	case err := <-done:
		cancel()
		t.Fatalf("run did not start: %v", err)
	}
	var cs *mcp.ClientSession
	var err error
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, copts)
	if o.listen != "" {
		cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.Host,
			HTTPClient: &http.Client{Transport: bearer{o.hostToken}}}, nil)
	} else {
		cs, err = client.Connect(ctx, ct, nil)
	}
	require.NoError(t, err)
	stop := func() {
		_ = cs.Close()
		if o.listen != "" {
			cancel()
		}
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("run did not stop")
		}
		cancel()
	}
	return cs, &logs, r, stop
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func defaults() options {
	return options{siteAddr: "127.0.0.1:0", user: "user:dana", agent: defaultAgent, task: "t-1",
		approver: "user:dana", wait: 50 * time.Millisecond, progress: time.Second}
}

// TestRunStdio runs the command's stdio mode on an in-memory transport:
// the approval site starts, the enrollment and approval links go to the
// log, never to the model, and calls are gated.
func TestRunStdio(t *testing.T) {
	cs, logs, r, stop := start(t, defaults())
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "q3.csv"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, resultText(res))
	assert.Equal(t, q3, resultText(res))

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_email", Arguments: map[string]any{"to": "finance@example.com"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "not run: "+mcpgate.ReasonNoDecision, resultText(res))
	stop()
	text := logs.String()
	assert.Contains(t, text, "enrollment link for user:dana (works once): "+r.Site+"/enroll?invite=")
	assert.Regexp(t, regexp.QuoteMeta("approval needed: "+r.Site+"/approve/")+`\S+`, text)
	assert.Contains(t, text, "run_shell: upstream suggests read")
}

// TestRunHTTP serves hosts over streamable HTTP with the bearer token.
func TestRunHTTP(t *testing.T) {
	o := defaults()
	o.listen, o.hostToken = "127.0.0.1:0", "host-token-0123456789-0123456789-0123456789"
	cs, _, r, stop := start(t, o)
	defer stop()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_tickets", Arguments: map[string]any{"query": "q3"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, resultText(res))
	resp, err := http.Post(r.Host, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestRunRefusesBadStart: an upstream without a catalog, a short host
// token, both kinds of upstream: errors at start.
func TestRunRefusesBadStart(t *testing.T) {
	for name, edit := range map[string]func(*options){
		"upstream without catalog": func(o *options) { o.upstreamCmd = []string{"true"} },
		"two upstreams":            func(o *options) { o.upstreamCmd, o.upstreamURL = []string{"x"}, "http://127.0.0.1:1" },
		"short host token":         func(o *options) { o.listen, o.hostToken = "127.0.0.1:0", "short" },
		"unreachable upstream":     func(o *options) { o.upstreamURL, o.catalog = "http://127.0.0.1:1/mcp", "catalog.json" },
	} {
		t.Run(name, func(t *testing.T) {
			o := defaults()
			edit(&o)
			st, _ := mcp.NewInMemoryTransports()
			err := run(context.Background(), o, st, &bytes.Buffer{}, nil)
			assert.Error(t, err)
		})
	}
}
