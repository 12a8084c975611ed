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

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestSiteSaysASecondPersonIsNeeded: on the approval site, an approver
// below the catch floor who approves a refund is refused with a code and
// words of its own, and the refund waits; their denial is accepted.
func TestSiteSaysASecondPersonIsNeeded(t *testing.T) {
	ctx := context.Background()
	cat, err := policy.NewCatalog("v1",
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible, Approvers: "finance"},
		policy.Tool{Name: "send_email", Class: card.ClassExternal, Approvers: "finance"})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat, gate.WithApproverGroup("finance", stepuptest.Approver, "user:erin"),
		gate.WithExecutor("issue_refund", &recorder{}), gate.WithPractice("finance", 1), gate.WithoutFloodControlUnsafe(),
		gate.WithDwell(0), gate.WithSecondPersonBelowFloor(figures.DefaultCatchFloor, 24*time.Hour, card.ClassIrreversible))
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), &gateway.SiteOptions{Tickets: h.Gate})
	require.NoError(t, err)
	q := &quorumSite{Harness: h, srv: httptest.NewServer(site)}
	t.Cleanup(q.srv.Close)
	propose := func(i int, tool, args string) stepup.TicketID {
		tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: tool, Args: json.RawMessage(args),
			Session: fmt.Sprintf("s-%d", i), Principal: canon.Principal{User: "user:ivy", Agent: "agent:billing"}})
		require.NoError(t, err)
		return tk.ID
	}
	for i := range 6 { // Dana misses six practice copies
		real := propose(i, "send_email", fmt.Sprintf(`{"to":"finance+%d@example.com","subject":"q"}`, i))
		require.NoError(t, h.Gate.Settle(ctx))
		queue, err := h.Gate.Desk().Queue(ctx, stepuptest.Approver, 100)
		require.NoError(t, err)
		for _, e := range queue {
			if _, err := h.Gate.Ticket(ctx, e.Ticket.ID); e.Ticket.ID != real && err != nil {
				_, err = h.Approve(e.Ticket.ID)
				require.NoError(t, err)
			}
		}
	}
	id := propose(100, "issue_refund", `{"order":"o-7","amount":40}`)
	status, out := q.approve(t, q.Authenticator, id)
	assert.Equal(t, http.StatusForbidden, status)
	code, msg := refusalCode(out)
	assert.Equal(t, gateway.CodeSecondPerson, code)
	assert.Contains(t, msg, "another person of your group must approve")
	tk, err := h.Gate.Ticket(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status)
	denied, err := h.Deny(id, "not this one")
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, denied.Status)
}
