package mcpgate_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// heldProposals is a runtime whose second Propose, once answered, waits
// for the test before the proxy reads the answer: the gap between the
// gate merging a call into a ticket and the proxy joining its flight.
type heldProposals struct {
	stepup.Runtime
	n        atomic.Int32
	proposed chan stepup.TicketID
	release  chan struct{}
}

func (r *heldProposals) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	tk, err := r.Runtime.Propose(ctx, c)
	if r.n.Add(1) == 2 {
		r.proposed <- tk.ID
		<-r.release
	}
	return tk, err
}

// TestJoinAndWithdrawalInterleavings: a call gives up as the last waiter
// of its ticket, and an identical call of the same session comes in
// around the withdrawal, in every order of the three steps that matter
// (the gate merging the call into the ticket, the proxy joining its
// flight, the withdrawal committing), with a Canceller that honours its
// context and one that commits regardless (a remote gateway that had the
// request already). Whatever the order, the call that never gave up is
// never told it was cancelled: it waits on the ticket, or on a fresh one
// when the first was withdrawn under it, and runs once when approved.
func TestJoinAndWithdrawalInterleavings(t *testing.T) {
	type order string
	const (
		joinThenCommit   order = "merged, joined, then the withdrawal commits"
		commitThenJoin   order = "merged, the withdrawal commits, then joined"
		proposeAfterward order = "the withdrawal commits, then merged and joined"
	)
	for _, o := range []order{joinThenCommit, commitThenJoin, proposeAfterward} {
		for _, commitAnyway := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/commit-anyway=%v", o, commitAnyway), func(t *testing.T) {
				held := newHeldCanceller()
				held.ignoreCtx = commitAnyway
				w := newWorld(t, func(o *mcpgate.Options, _ *mcpgate.UpstreamOptions) { o.Canceller = held })
				held.real = w.h.Gate
				rt := &heldProposals{Runtime: w.h.Gate, proposed: make(chan stepup.TicketID, 1), release: make(chan struct{})}
				var err error
				w.proxy, err = mcpgate.NewProxy(rt, principal, w.up, w.cat.Class, &mcpgate.Options{
					WaitTimeout: 10 * time.Second, ProgressInterval: 20 * time.Millisecond, Canceller: held,
					ApprovalLink: func(id stepup.TicketID) string { return gateway.ApprovalLink(stepuptest.RP().Origin, id) }})
				require.NoError(t, err)
				h := w.connect(hostOptions{urlElicitation: true})
				args := `{"path":"i.txt","content":"interleaved"}`

				quitter, quit := context.WithCancel(context.Background())
				quitDone := make(chan struct{})
				go func() {
					defer close(quitDone)
					_, err := h.cs.CallTool(quitter, callParams("write_file", args))
					assert.Error(t, err)
				}()
				first := ticketOf(t, h.nextLink(t))
				quit()
				require.Equal(t, first, <-held.arrived)

				joined := make(chan string, 1)
				join := func() {
					go func() {
						res, err := h.cs.CallTool(context.Background(), callParams("write_file", args))
						if !assert.NoError(t, err) || !assert.False(t, res.IsError, "%s", resultText(res)) {
							joined <- "error"
							return
						}
						joined <- resultText(res)
					}()
				}
				commit := func() {
					close(held.proceed)
					<-held.withdrawn
					<-quitDone
				}
				var latest stepup.TicketID
				switch o {
				case joinThenCommit:
					join()
					require.Equal(t, first, <-rt.proposed, "merged into the pending ticket")
					close(rt.release)
					latest = ticketOf(t, h.nextLink(t))
					require.Equal(t, first, latest)
					commit()
				case commitThenJoin:
					join()
					require.Equal(t, first, <-rt.proposed, "merged into the pending ticket")
					commit()
					close(rt.release)
					latest = ticketOf(t, h.nextLink(t))
				case proposeAfterward:
					commit()
					close(rt.release)
					join()
					<-rt.proposed
					latest = ticketOf(t, h.nextLink(t))
				}
				// Approve the ticket the call waits on: when the one it
				// joined was withdrawn under it, it proposes again.
				for range 3 {
					tk, err := w.h.Gate.Ticket(context.Background(), latest)
					require.NoError(t, err)
					if tk.Status == stepup.StatusPending {
						break
					}
					assert.Equal(t, stepup.StatusCancelled, tk.Status)
					latest = ticketOf(t, h.nextLink(t))
				}
				_, err = w.h.Approve(latest)
				require.NoError(t, err)
				assert.Equal(t, "wrote i.txt", <-joined)
				assert.Equal(t, 1, w.upstream.count("write_file"), "the approved call ran once")
				if o == joinThenCommit && !commitAnyway {
					assert.Equal(t, first, latest, "the joiner called the withdrawal off")
				}
				if latest != first {
					tk, err := w.h.Gate.Ticket(context.Background(), first)
					require.NoError(t, err)
					assert.Equal(t, stepup.StatusCancelled, tk.Status, "the ticket given up on runs nothing")
				}
			})
		}
	}
}
