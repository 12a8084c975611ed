package exectoken_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

type world = stepuptest.World

func newWorld(t *testing.T, opts ...gate.Option) *world { return stepuptest.NewWorld(t, opts...) }

func sendEmail(to string) stepup.Call { return stepuptest.SendEmail(to) }

// approved proposes c and approves it as the world's approver.
func approved(t *testing.T, w *stepuptest.Harness, c stepup.Call) stepup.Ticket {
	t.Helper()
	tk, err := w.Gate.Propose(t.Context(), c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	tk, err = w.Approve(tk.ID)
	require.NoError(t, err)
	return tk
}

func agentFor(user string) canon.Principal {
	return canon.Principal{User: user, Agent: "agent:reports"}
}

func reordered(c stepup.Call) stepup.Call {
	c.Args = json.RawMessage(`{ "attachment": "q3.csv", "subject": "Q3 summary", "to": "finance@example.com" }`)
	return c
}
