package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// TestApprovalPageSaysWhatBecameOfTicket: the approval page of a ticket
// that can no longer be decided says, from the gate's own record, what
// became of it: withdrawn by the host that gave up, timed out in the
// gateway's wait, or declined by the person the link went to. Before the
// site read the gate's tickets each page said only "already decided".
func TestApprovalPageSaysWhatBecameOfTicket(t *testing.T) {
	for name, tc := range map[string]struct {
		wait    time.Duration
		decline bool
		giveUp  bool
		want    string
	}{
		"withdrawn by the host": {wait: time.Minute, giveUp: true, want: "cancelled by the agent before a decision"},
		"timed out":             {wait: 50 * time.Millisecond, want: "Nobody decided this request in time"},
		"declined":              {wait: time.Minute, decline: true, want: "declined to open it"},
	} {
		t.Run(name, func(t *testing.T) {
			o := defaults()
			o.wait = tc.wait
			links := make(chan string, 1)
			copts := &mcp.ClientOptions{}
			if tc.decline {
				copts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
				copts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					links <- r.Params.URL
					return &mcp.ElicitResult{Action: "decline"}, nil
				}
			}
			cs, _, r, stop := startClient(t, o, copts)
			defer stop()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_email", Arguments: map[string]any{"to": "finance@example.com"}})
			}()
			var id string
			require.Eventually(t, func() bool {
				all, _, err := r.gate.Desk().List(context.Background(), "user:dana", store.Filter{})
				if err != nil || len(all) == 0 {
					return false
				}
				id = string(all[0].Ticket.ID)
				return true
			}, 10*time.Second, 5*time.Millisecond)
			if tc.giveUp {
				cancel()
			}
			<-done
			cancel()
			require.Eventually(t, func() bool {
				tk, err := r.gate.Ticket(context.Background(), stepup.TicketID(id))
				return err == nil && tk.Status == stepup.StatusCancelled
			}, 10*time.Second, 5*time.Millisecond)

			resp, err := http.Get(r.Site + "/approve/" + id)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			assert.Contains(t, string(body), tc.want)
			assert.NotContains(t, string(body), "This request was already decided.")
		})
	}
}
