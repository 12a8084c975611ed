package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// heldTool is an executor that runs until released, and reports whether
// its run was cut short.
type heldTool struct {
	started chan struct{}
	release chan struct{}
	cut     chan bool
}

func (h *heldTool) Execute(ctx context.Context, _ canon.Effect, _ string) ([]byte, error) {
	close(h.started)
	select {
	case <-ctx.Done():
		h.cut <- true
		return nil, ctx.Err()
	case <-h.release:
		h.cut <- false
		return []byte(`{"sent":true}`), nil
	}
}

// TestExecuteOutlivesTheRuntimesConnection: a person approved the call
// and the runtime asked the agent API to run it; the approval is spent
// the moment it starts. A runtime whose HTTP request then ends (its
// client's timeout, a dropped connection, a restart) must not cut the
// approved tool off half-way and leave the ticket failed: the person's
// approval would be wasted and the action half done. The MCP gateway runs
// an approved call to its end whatever the host does; the agent API ties
// it to the connection.
func TestExecuteOutlivesTheRuntimesConnection(t *testing.T) {
	ends := map[string]func(srv *httptest.Server, cancel context.CancelFunc){
		"request-cancelled":  func(_ *httptest.Server, cancel context.CancelFunc) { cancel() },
		"connection-dropped": func(srv *httptest.Server, _ context.CancelFunc) { srv.CloseClientConnections() },
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			tool := &heldTool{started: make(chan struct{}), release: make(chan struct{}), cut: make(chan bool, 1)}
			h := stepuptest.NewGate(t, nil, gate.WithExecutor("send_email", tool))
			api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
				{Token: agentToken, Agent: "agent:reports", Users: []string{stepuptest.Approver}}}, nil)
			require.NoError(t, err)
			srv := httptest.NewServer(api)
			t.Cleanup(srv.Close)
			ctx := context.Background()
			propose, err := remote.NewClient(srv.URL, agentToken, nil)
			require.NoError(t, err)
			tk, err := propose.Propose(ctx, stepup.Call{Tool: "send_email",
				Args:    json.RawMessage(fmt.Sprintf(`{"to":"finance@example.com","subject":%q}`, name)),
				Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			_, err = h.Approve(tk.ID)
			require.NoError(t, err)

			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			runtime, err := remote.NewClient(srv.URL, agentToken, &http.Client{})
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() { _, err := runtime.Execute(rctx, tk.ID); done <- err }()
			<-tool.started
			end(srv, cancel)
			require.Error(t, <-done, "the runtime's request ended")

			select {
			case cut := <-tool.cut:
				assert.False(t, cut, "the approved tool was cut off when the runtime's request ended")
			case <-time.After(500 * time.Millisecond):
				close(tool.release)
				assert.False(t, <-tool.cut)
			}
			// Wait returns as soon as a ticket leaves pending, so it may
			// read the ticket executing while the released tool's result
			// is being recorded: read until it has a final status.
			var got stepup.Ticket
			require.Eventually(t, func() bool {
				got, err = h.Gate.Ticket(ctx, tk.ID)
				return err == nil && got.Status != stepup.StatusExecuting
			}, 10*time.Second, 5*time.Millisecond)
			assert.Equal(t, stepup.StatusExecuted, got.Status, "the approval was spent on a run cut short: %s", got.Reason)
		})
	}
}
