package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestRuntimeReachesOnlyItsOwnUsersTickets gives one agent two runtime
// tokens, one per tenant (a runtime acting for user:dana, another for
// user:erin), as a hosted agent serving two customers would. The erin
// runtime, hijacked, learns the id of one of dana's tickets (an approval
// link, a log line) and tries to wait on it, execute it once approved,
// and cancel it while pending, under several spellings of the id. A
// token acts only for its users, so dana's tickets must not exist for it.
func TestRuntimeReachesOnlyItsOwnUsersTickets(t *testing.T) {
	const (
		danaToken = "tok-dana-0123456789abcdefghijklmnopqrstuvwxyz"
		erinToken = "tok-erin-0123456789abcdefghijklmnopqrstuvwxyz"
	)
	for _, op := range []string{"wait", "execute", "cancel"} {
		t.Run(op, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, nil)
			api, err := gateway.NewAgentAPI(r.Gate, []gateway.RuntimeToken{
				{Token: danaToken, Agent: "agent:reports", Users: []string{"user:dana"}},
				{Token: erinToken, Agent: "agent:reports", Users: []string{"user:erin"}},
			}, nil)
			require.NoError(t, err)
			srv := httptest.NewServer(api)
			t.Cleanup(srv.Close)
			dana, err := remote.NewClient(srv.URL, danaToken, srv.Client())
			require.NoError(t, err)
			erin, err := remote.NewClient(srv.URL, erinToken, srv.Client())
			require.NoError(t, err)

			tk, err := dana.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			if op == "execute" {
				_, err := r.Approve(tk.ID)
				require.NoError(t, err)
			}
			for _, id := range []stepup.TicketID{tk.ID, stepup.TicketID(strings.ToUpper(string(tk.ID))),
				tk.ID + " ", tk.ID + "%20", "./" + tk.ID} {
				var err error
				switch op {
				case "wait":
					wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
					_, err = erin.Wait(wctx, id)
					cancel()
				case "execute":
					_, err = erin.Execute(ctx, id)
				case "cancel":
					_, err = erin.Cancel(ctx, id, "withdrawn")
				}
				if id == tk.ID {
					assert.ErrorIs(t, err, stepup.ErrNotFound, fmt.Sprintf("erin's runtime could %s dana's ticket", op))
				} else {
					assert.Error(t, err, "%s of a mangled id %q", op, id)
				}
			}
			got, err := r.Gate.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.NotEqual(t, stepup.StatusCancelled, got.Status, "erin's runtime withdrew dana's call")
			assert.Zero(t, r.exec.count(), "erin's runtime ran dana's call")
		})
	}
}
