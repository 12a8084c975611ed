package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestRuntimeCannotPickItsApprovers: a runtime token fixes the agent a
// runtime acts as and the users it acts for, so a hijacked runtime
// cannot act as anyone else. The body's principal also carries
// delegations, which the gate takes as the requester's own principals and
// therefore bars from deciding the ticket. The token says nothing about
// them: an agent that lists members of the approver group as its
// "delegations" strikes them from the ticket's deciders and routes its
// refund to the one member it likes, the most hurried reviewer, or to
// nobody careful at all. For every subset of the group named as
// delegations, either the agent API refuses the call or every member
// still sees the ticket in their queue.
func TestRuntimeCannotPickItsApprovers(t *testing.T) {
	group := []string{"user:erin", "user:finn", "user:gina"}
	cat, err := policy.NewCatalog("picked-approvers-1",
		policy.Tool{Name: "refund", Title: "Refund", Class: card.ClassIrreversible, Approvers: "finance"})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat, gate.WithApproverGroup("finance", group...))
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
		{Token: agentToken, Agent: "agent:reports", Users: []string{stepuptest.Approver}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
	require.NoError(t, err)
	ctx := context.Background()

	for mask := 1; mask < 1<<len(group); mask++ {
		var struck []string
		for i, u := range group {
			if mask&(1<<i) != 0 {
				struck = append(struck, u)
			}
		}
		if len(struck) == len(group) {
			continue // nobody left: the gate denies at propose, which is fine
		}
		t.Run(fmt.Sprint(struck), func(t *testing.T) {
			tk, err := client.Propose(ctx, stepup.Call{Tool: "refund",
				Args:    json.RawMessage(fmt.Sprintf(`{"order":"A-%d","amount":900}`, mask)),
				Session: fmt.Sprintf("s-%d", mask),
				Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports",
					Delegations: append([]string{"agent:helper"}, struck...)}})
			if errors.Is(err, remote.ErrForbidden) || errors.Is(err, remote.ErrInvalid) {
				return // refused at the door
			}
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
			for _, u := range group {
				q, err := h.Gate.Desk().Queue(ctx, u, 0)
				require.NoError(t, err)
				listed := slices.ContainsFunc(q, func(e plug.Entry) bool { return e.Ticket.ID == tk.ID })
				assert.True(t, listed, "the agent struck %s from the deciders of its own refund", u)
			}
		})
	}
}
