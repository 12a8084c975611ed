package mcpgate_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// heldCanceller is the runtime's own Cancel, held at its door: the first
// Cancel says it is about to withdraw its ticket and waits for the test
// to let it through, so a test can put another host call in that gap.
type heldCanceller struct {
	real      stepup.Canceller
	once      sync.Once
	arrived   chan stepup.TicketID
	proceed   chan struct{}
	withdrawn chan struct{}
}

func newHeldCanceller() *heldCanceller {
	return &heldCanceller{arrived: make(chan stepup.TicketID, 1), proceed: make(chan struct{}),
		withdrawn: make(chan struct{})}
}

func (c *heldCanceller) Cancel(ctx context.Context, id stepup.TicketID, why string) (stepup.Ticket, error) {
	first := false
	c.once.Do(func() { first = true })
	if !first {
		return c.real.Cancel(ctx, id, why)
	}
	c.arrived <- id
	<-c.proceed
	defer close(c.withdrawn)
	return c.real.Cancel(ctx, id, why)
}

// TestLastQuitterDoesNotCancelANewJoiner: the proxy promises that a
// ticket identical calls share is cancelled "only when the last of them
// gives up". A host call that gives up finds itself the last, leaves,
// and cancels; an identical call of the same session that the gate
// merges into the still-pending ticket in that moment joins a fresh
// flight and waits, yet the ticket it waits on is withdrawn under it: the
// person who opens its link finds it cancelled, and the call is answered
// "cancelled by the agent" though it never gave up.
func TestLastQuitterDoesNotCancelANewJoiner(t *testing.T) {
	held := newHeldCanceller()
	w := newWorld(t, func(o *mcpgate.Options, _ *mcpgate.UpstreamOptions) { o.Canceller = held })
	held.real = w.h.Gate
	h := w.connect(hostOptions{urlElicitation: true})
	args := `{"path":"j.txt","content":"joined"}`

	quitter, quit := context.WithCancel(context.Background())
	quitDone := make(chan struct{})
	go func() {
		defer close(quitDone)
		_, err := h.cs.CallTool(quitter, callParams("write_file", args))
		assert.Error(t, err, "the quitter's own request ends with its context")
	}()
	first := ticketOf(t, h.nextLink(t))
	quit()
	id := <-held.arrived // the quitter left as the last waiter and is cancelling
	require.Equal(t, first, id)

	type answer struct {
		text  string
		isErr bool
	}
	joined := make(chan answer, 1)
	go func() {
		res, err := h.cs.CallTool(context.Background(), callParams("write_file", args))
		if !assert.NoError(t, err) {
			joined <- answer{}
			return
		}
		joined <- answer{resultText(res), res.IsError}
	}()
	second := ticketOf(t, h.nextLink(t)) // the joiner waits, its link sent
	require.Equal(t, first, second, "the gate merged the identical call into the pending ticket")

	close(held.proceed)
	<-held.withdrawn
	<-quitDone
	tk, err := w.h.Gate.Ticket(context.Background(), first)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status,
		"a host call still waits on this ticket, but it was withdrawn: %s", tk.Reason)

	if tk.Status == stepup.StatusPending {
		_, err = w.h.Approve(first)
		require.NoError(t, err)
	}
	got := <-joined
	assert.False(t, got.isErr, "the call that never gave up was answered: %s", got.text)
	if !got.isErr {
		assert.Equal(t, 1, w.upstream.count("write_file"))
	}
}
