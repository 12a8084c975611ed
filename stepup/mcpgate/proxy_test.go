package mcpgate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

func TestAllowedReadRunsAtOnce(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "notes.txt"), []byte("hello"), 0o600))
	h := w.connect(hostOptions{urlElicitation: true})
	out, isErr := h.call(t, context.Background(), "read_file", `{"path":"notes.txt"}`)
	assert.False(t, isErr, out)
	assert.Equal(t, "hello", out)
	assert.Equal(t, 1, w.upstream.count("read_file"))
	assert.Empty(t, h.elicits, "an allowed call asks nobody")
}

// TestWriteWaitsForURLElicitation: the approval link reaches the person
// as a URL elicitation, never the tool result; the approver approves with
// a passkey; the STORED call runs once and the file is on disk.
func TestWriteWaitsForURLElicitation(t *testing.T) {
	w := newWorld(t)
	h := w.connect(hostOptions{urlElicitation: true})
	defer h.decide(t, func(id stepup.TicketID) {
		_, err := w.h.Approve(id)
		assert.NoError(t, err)
	})()
	out, isErr := h.call(t, context.Background(), "write_file", `{"path":"a.txt","content":"approved text"}`)
	require.False(t, isErr, out)
	assert.Equal(t, "wrote a.txt", out)
	got, err := os.ReadFile(filepath.Join(w.dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "approved text", string(got))
	assert.Equal(t, 1, w.upstream.count("write_file"))

	h.mu.Lock()
	require.Len(t, h.elicits, 1)
	e := h.elicits[0]
	logs := len(h.logs)
	h.mu.Unlock()
	assert.Equal(t, "url", e.Mode)
	assert.Equal(t, string(ticketOf(t, e.URL)), e.ElicitationID)
	assert.NotContains(t, out, e.URL, "the link never reaches the model")
	assert.Zero(t, logs, "with URL elicitation the link is not also logged")
	assert.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.completed) == 1 && h.completed[0] == e.ElicitationID
	}, 2*time.Second, 10*time.Millisecond, "the host is told the elicitation completed")
}

// TestWithoutElicitationLogsAndSendsProgress: a host without URL
// elicitation gets the link as a log message and steady progress while
// the call waits.
func TestWithoutElicitationLogsAndSendsProgress(t *testing.T) {
	w := newWorld(t)
	h := w.connect(hostOptions{})
	defer h.decide(t, func(id stepup.TicketID) {
		assert.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.progress >= 3 },
			5*time.Second, 5*time.Millisecond)
		_, err := w.h.Approve(id)
		assert.NoError(t, err)
	})()
	out, isErr := h.call(t, context.Background(), "write_file", `{"path":"b.txt","content":"x"}`)
	require.False(t, isErr, out)
	assert.Equal(t, 1, w.upstream.count("write_file"))
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Len(t, h.logs, 1)
	assert.Equal(t, "asu", h.logs[0].Logger)
	assert.GreaterOrEqual(t, h.progress, 3)
}

// TestHostGivingUpCancelsTicket: a host that times out leaves a cancelled
// ticket; an approver who comes later cannot approve it and nothing runs.
// The naive gateway, with no canceller, leaves the ticket approvable: the
// approval is wasted and the person misled.
func TestHostGivingUpCancelsTicket(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []worldOption
		cancelled bool
	}{
		{"gateway", nil, true},
		{"naive gateway without cancel", []worldOption{withoutCanceller()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.opts...)
			h := w.connect(hostOptions{urlElicitation: true})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { h.nextLink(t); cancel() }() // the host's timeout
			p := callParams("write_file", `{"path":"late.txt","content":"x"}`)
			_, err := h.cs.CallTool(ctx, p)
			require.Error(t, err)
			h.mu.Lock()
			id := ticketOf(t, h.elicits[0].URL)
			h.mu.Unlock()

			settled := func() bool {
				tk, err := w.h.Gate.Ticket(context.Background(), id)
				return err == nil && tk.Status != stepup.StatusPending
			}
			if !tc.cancelled {
				assert.Never(t, settled, 300*time.Millisecond, 20*time.Millisecond)
				_, err = w.h.Approve(id)
				assert.NoError(t, err, "the naive gateway takes an approval for a call nobody waits for")
				assert.Zero(t, w.upstream.count("write_file"))
				return
			}
			require.Eventually(t, settled, 2*time.Second, 10*time.Millisecond, "ticket still pending")
			tk, err := w.h.Gate.Ticket(context.Background(), id)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusCancelled, tk.Status)
			assert.Equal(t, mcpgate.ReasonHostCancelled, tk.Reason)
			_, err = w.h.Approve(id)
			assert.ErrorIs(t, err, stepup.ErrResolved)
			assert.Zero(t, w.upstream.count("write_file"))
			assert.NoFileExists(t, filepath.Join(w.dir, "late.txt"))
		})
	}
}

// TestNewProxyRefusesMalformedPrincipals: the principal the proxy proposes
// for must be a user and an agent of the gate's one id syntax; a
// look-alike or mis-cased name is a configuration error, not a proxy
// whose every call the gate denies.
func TestNewProxyRefusesMalformedPrincipals(t *testing.T) {
	w := newWorld(t)
	for _, p := range []canon.Principal{
		{User: "user:Dana", Agent: "agent:mcp-test"},
		{User: "\u0443ser:dana", Agent: "agent:mcp-test"},
		{User: "user:dana", Agent: "agent:MCP"},
		{User: "user:dana", Agent: "\u0430gent:mcp"},
		{User: "agent:mcp", Agent: "agent:mcp-test"},
		{User: "user:dana", Agent: "user:erin"},
		{User: "", Agent: "agent:mcp-test"},
	} {
		_, err := mcpgate.NewProxy(w.h.Gate, p, w.up, w.cat.Class, nil)
		assert.ErrorIs(t, err, stepup.ErrConfig, "%+v", p)
	}
	_, err := mcpgate.NewProxy(w.h.Gate, principal, w.up, w.cat.Class, nil)
	assert.NoError(t, err)
}
