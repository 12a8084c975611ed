package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// TestAnsweredAtOnce covers calls the gate answers without a person: the
// allowed call runs, every refusal is a tool error with its reason, and
// nothing refused reaches the tool.
func TestAnsweredAtOnce(t *testing.T) {
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		runs   bool
		reason string
	}{
		{"read allowed", "read_file", map[string]any{"path": "q3.csv"}, true, ""},
		{"reversible allowed", "write_draft", email("finance@example.com"), true, ""},
		{"offered, not in the catalog", "run_shell", map[string]any{"command": "id"}, false, "denied: unknown tool"},
		{"never offered", "format_disk", map[string]any{}, false, "denied: unknown tool"},
		{"schema", "send_email", map[string]any{"to": "finance@example.com", "bcc": "x@evil.test"}, false,
			"denied: arguments do not match the tool's schema"},
		{"limit in code", "issue_refund", map[string]any{"order": "A-1", "amount": 900}, false,
			"denied: over the per-call limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil, nil, nil)
			res := call(t, f.cs, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			assert.Equal(t, !tt.runs, res.IsError)
			runs := f.rec.recorded()
			if !tt.runs {
				assert.Equal(t, tt.reason, resultText(res))
				assert.Empty(t, runs, "a refused call reached the tool")
				return
			}
			var out struct {
				Tool string `json:"tool"`
				Done bool   `json:"done"`
			}
			require.NoError(t, json.Unmarshal([]byte(resultText(res)), &out))
			assert.Equal(t, tt.tool, out.Tool)
			assert.True(t, out.Done)
			require.Len(t, runs, 1)
			assert.Equal(t, dana, runs[0].Effect.Principal)
			assert.Empty(t, f.pending, "an allowed call asked a person")
		})
	}
}

// TestNeedsApproval covers a call that waits for a person: approved on
// the desk it runs the stored call; denied, timed out or not decided
// within the server's bound it is a tool error and runs nothing. The
// approval link never reaches the model.
func TestNeedsApproval(t *testing.T) {
	tests := []struct {
		name   string
		wait   time.Duration
		decide func(t *testing.T, f *fixture, tk stepup.Ticket)
		runs   bool
		text   string
		status stepup.Status // of the ticket afterwards
	}{
		{"approved", time.Minute, func(t *testing.T, f *fixture, tk stepup.Ticket) {
			_, err := f.h.Approve(tk.ID)
			require.NoError(t, err)
		}, true, "", stepup.StatusExecuted},
		{"denied by the approver", time.Minute, func(t *testing.T, f *fixture, tk stepup.Ticket) {
			_, err := f.h.Deny(tk.ID, "wrong quarter")
			require.NoError(t, err)
		}, false, "denied by user:dana: wrong quarter", stepup.StatusDenied},
		{"approval timed out", time.Minute, func(t *testing.T, f *fixture, tk stepup.Ticket) {
			f.h.Clock.Advance(16 * time.Minute) // past the tool's 15-minute timeout
		}, false, "cancelled: no decision in time; cancelled and proposed write_draft instead", stepup.StatusCancelled},
		{"server stopped waiting", time.Millisecond, func(t *testing.T, f *fixture, tk stepup.Ticket) {},
			false, "not run: no decision in time", stepup.StatusPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil, nil, func(c *serverConfig) { c.WaitTimeout = tt.wait })
			ch := callAsync(f.cs, "send_email", email("finance@example.com"))
			tk := f.next(t)
			require.Equal(t, stepup.StatusPending, tk.Status)
			tt.decide(t, f, tk)
			res := result(t, ch)
			text := resultText(res)
			assert.NotContains(t, text, string(tk.ID), "the model saw the ticket or its link")
			assert.Equal(t, !tt.runs, res.IsError)
			if tt.text != "" {
				assert.Equal(t, tt.text, text)
			}
			runs := f.rec.recorded()
			if tt.runs {
				require.Len(t, runs, 1)
				assert.Equal(t, "send_email", runs[0].Effect.Tool)
				assert.JSONEq(t, `{"to":"finance@example.com","subject":"Q3 summary","attachment":"q3.csv"}`,
					string(runs[0].Effect.Args))
			} else {
				assert.Empty(t, runs)
			}
			now, err := f.h.Gate.Ticket(context.Background(), tk.ID)
			require.NoError(t, err)
			assert.Equal(t, tt.status, now.Status)
		})
	}
}

// TestPrincipalFromConfiguration: whatever the request says, in its
// arguments or in _meta, the call acts for the configured principal and
// in the connection's own session.
func TestPrincipalFromConfiguration(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	mallory := map[string]any{"user": "user:mallory", "agent": "agent:evil", "delegations": []string{"user:mallory"}}
	res := call(t, f.cs, &mcp.CallToolParams{
		Name:      "search_tickets",
		Arguments: map[string]any{"query": "refunds", "principal": mallory, "user": "user:mallory", "session": "s-admin"},
		Meta:      mcp.Meta{"principal": mallory, "user": "user:mallory", "session": "s-admin", "progressToken": "p"},
	})
	require.False(t, res.IsError, resultText(res))
	runs := f.rec.recorded()
	require.Len(t, runs, 1)
	assert.Equal(t, dana, runs[0].Effect.Principal)

	// A call that needs a person: the card names the configured principal
	// and the ticket belongs to this connection's session, not the claimed one.
	ch := callAsync(f.cs, "send_email", email("finance@example.com"))
	tk := f.next(t)
	p, err := f.h.Gate.Desk().Prompt(context.Background(), tk.ID)
	require.NoError(t, err)
	assert.Contains(t, p.Card.Visible(), `on behalf of "user:dana" through agent "agent:mcp"`)
	assert.NotContains(t, p.Card.Visible(), "mallory")
	a, err := f.h.Store.Get(context.Background(), string(tk.ID))
	require.NoError(t, err)
	assert.Equal(t, dana, a.Requester)
	assert.Regexp(t, `^mcp:conn-[0-9a-f]{32}$`, a.Session)
	_, err = f.h.Approve(tk.ID)
	require.NoError(t, err)
	assert.False(t, result(t, ch).IsError)
}

// TestIdenticalCalls: two concurrent identical calls in one MCP session
// are one ticket (the store merges a pending duplicate of the same session
// and digest), one approval, and the tool runs once; the other call is
// told so. In two MCP sessions they are two tickets, each for its own
// approval.
func TestIdenticalCalls(t *testing.T) {
	t.Run("one session: merged", func(t *testing.T) {
		f := newFixture(t, nil, nil, nil)
		first := callAsync(f.cs, "send_email", email("finance@example.com"))
		a := f.next(t)
		second := callAsync(f.cs, "send_email", email("finance@example.com"))
		b := f.next(t)
		require.Equal(t, a.ID, b.ID, "the duplicate was not merged")
		stored, err := f.h.Store.Get(context.Background(), string(a.ID))
		require.NoError(t, err)
		assert.Equal(t, 1, stored.Merged)

		_, err = f.h.Approve(a.ID)
		require.NoError(t, err)
		results := []*mcp.CallToolResult{result(t, first), result(t, second)}
		ok, refusedOnce := 0, 0
		for _, r := range results {
			if r.IsError {
				refusedOnce++
				assert.Contains(t, resultText(r), "already used")
			} else {
				ok++
			}
		}
		assert.Equal(t, 1, ok)
		assert.Equal(t, 1, refusedOnce)
		assert.Len(t, f.rec.recorded(), 1, "the tool ran more than once")
	})
	t.Run("two sessions: two tickets", func(t *testing.T) {
		f := newFixture(t, nil, nil, nil)
		other := f.connect(t)
		first := callAsync(f.cs, "send_email", email("finance@example.com"))
		a := f.next(t)
		second := callAsync(other, "send_email", email("finance@example.com"))
		b := f.next(t)
		require.NotEqual(t, a.ID, b.ID)
		assert.Equal(t, a.Digest, b.Digest, "the same action")
		for _, tk := range []stepup.Ticket{a, b} {
			_, err := f.h.Approve(tk.ID)
			require.NoError(t, err)
		}
		assert.False(t, result(t, first).IsError)
		assert.False(t, result(t, second).IsError)
		assert.Len(t, f.rec.recorded(), 2)
	})
}

// TestSubstitution: after an approved call ran, the same tool called
// again with a changed recipient is a new ticket with its own digest,
// waiting for its own approval; the earlier approval does not carry over.
func TestSubstitution(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	ch := callAsync(f.cs, "send_email", email("finance@example.com"))
	approved := f.next(t)
	_, err := f.h.Approve(approved.ID)
	require.NoError(t, err)
	require.False(t, result(t, ch).IsError)

	ch = callAsync(f.cs, "send_email", email("finance@exarnple.com"))
	again := f.next(t)
	assert.NotEqual(t, approved.ID, again.ID)
	assert.NotEqual(t, approved.Digest, again.Digest)
	assert.Equal(t, stepup.StatusPending, again.Status)
	f.h.Clock.Advance(16 * time.Minute)
	assert.True(t, result(t, ch).IsError)

	runs := f.rec.recorded()
	require.Len(t, runs, 1)
	d, err := runs[0].Effect.Digest()
	require.NoError(t, err)
	assert.Equal(t, approved.Digest, d, "what ran is the approved effect")
}

// TestNoSession: a call without an MCP session is refused before the
// gate is asked.
func TestNoSession(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	h := &gated{rt: f.h.Gate, cfg: serverConfig{Principal: dana}, sessions: newSessionIDs()}
	res, err := h.call(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Name: "read_file", Arguments: json.RawMessage(`{"path":"q3.csv"}`)}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Empty(t, f.rec.recorded())
}

// TestAdvertisedHints: the server tells its client the hints of the
// classes the integrator confirmed, never the upstream server's.
func TestAdvertisedHints(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	list, err := f.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	got := map[string]*mcp.ToolAnnotations{}
	for _, tool := range list.Tools {
		got[tool.Name] = tool.Annotations
	}
	require.Len(t, got, len(seedUpstream()))
	// Upstream says send_email is closed world and run_shell read-only.
	require.NotNil(t, got["send_email"].OpenWorldHint)
	assert.True(t, *got["send_email"].OpenWorldHint)
	assert.False(t, got["run_shell"].ReadOnlyHint)
	require.NotNil(t, got["run_shell"].DestructiveHint)
	assert.True(t, *got["run_shell"].DestructiveHint)
	assert.True(t, got["read_file"].ReadOnlyHint)
}
