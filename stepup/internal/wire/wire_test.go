package wire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// TestEveryStatusCrossesTheWire: each status a ticket can have reaches the
// client as itself; executed, failed and abandoned in particular stay
// apart.
func TestEveryStatusCrossesTheWire(t *testing.T) {
	for _, s := range []stepup.Status{stepup.StatusAllowed, stepup.StatusDenied, stepup.StatusPending,
		stepup.StatusApproved, stepup.StatusExpired, stepup.StatusCancelled, stepup.StatusRevoked,
		stepup.StatusExecuting, stepup.StatusExecuted, stepup.StatusFailed, stepup.StatusAbandoned} {
		raw, err := json.Marshal(FromTicket(stepup.Ticket{ID: "t-1", Status: s, Tool: "send_email"}))
		require.NoError(t, err)
		var w Ticket
		require.NoError(t, json.Unmarshal(raw, &w))
		got, err := w.Ticket()
		require.NoError(t, err)
		require.Equal(t, s, got.Status)
	}
}
