package mcpgate_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestHostGivingUpCancelsTicketOverTheAgentAPI: with the gate in another
// process (the proxy's runtime is remote.Client, as with -gateway), a call
// the host gives up on is withdrawn through the agent API's cancel route,
// so the approver finds it cancelled and an approval can no longer run it.
func TestHostGivingUpCancelsTicketOverTheAgentAPI(t *testing.T) {
	w := newWorld(t)
	const token = "tok-mcp-test-0123456789abcdefghijklmnopqrstuvwxyz"
	api, err := gateway.NewAgentAPI(w.h.Gate, []gateway.RuntimeToken{
		{Token: token, Agent: principal.Agent, Users: []string{principal.User}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, token, srv.Client())
	require.NoError(t, err)
	w.proxy, err = mcpgate.NewProxy(client, principal, w.up, w.cat.Class, &mcpgate.Options{
		WaitTimeout: 10 * time.Second, ProgressInterval: 20 * time.Millisecond,
		ApprovalLink: func(id stepup.TicketID) string { return gateway.ApprovalLink(srv.URL, id) }})
	require.NoError(t, err)

	h := w.connect(hostOptions{urlElicitation: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { h.nextLink(t); cancel() }() // the host's timeout
	_, err = h.cs.CallTool(ctx, callParams("write_file", `{"path":"late.txt","content":"x"}`))
	require.Error(t, err)
	h.mu.Lock()
	id := ticketOf(t, h.elicits[0].URL)
	h.mu.Unlock()

	require.Eventually(t, func() bool {
		tk, err := w.h.Gate.Ticket(context.Background(), id)
		return err == nil && tk.Status == stepup.StatusCancelled
	}, 5*time.Second, 10*time.Millisecond, "the ticket is still pending")
	tk, err := w.h.Gate.Ticket(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, mcpgate.ReasonHostCancelled, tk.Reason)
	_, err = w.h.Approve(id)
	assert.ErrorIs(t, err, stepup.ErrResolved)
	assert.Zero(t, w.upstream.count("write_file"))
	assert.NoFileExists(t, filepath.Join(w.dir, "late.txt"))
}
