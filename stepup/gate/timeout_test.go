package gate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func TestTimeoutCancelsByDefault(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk, err := w.Gate.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: []byte(`{"order":"A-17","amount":120}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	assert.Equal(t, stepuptest.Start().Add(15*time.Minute), tk.ExpiresAt)
	w.Clock.Advance(15 * time.Minute)
	got, err := w.Gate.Wait(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusCancelled, got.Status)
	assert.Equal(t, "no decision in time; cancelled", got.Reason)
	_, err = w.Approve(tk.ID)
	assert.ErrorIs(t, err, stepup.ErrExpired, "too late to approve: it says it expired")
}

func TestTimeoutProposesTheSafeAlternative(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	id := pending(t, w, "finance@example.com")
	w.Clock.Advance(14 * time.Minute)
	n, err := w.Gate.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	w.Clock.Advance(time.Minute)
	n, err = w.Gate.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	got, err := w.Gate.Wait(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusCancelled, got.Status)
	require.NotEmpty(t, got.Next)
	alt, err := w.Gate.Wait(ctx, got.Next)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusAllowed, alt.Status)
	assert.Equal(t, "write_draft", alt.Tool)
	_, err = w.Gate.Execute(ctx, alt.ID)
	require.NoError(t, err)
	require.Equal(t, 1, w.Exec.Count())
	assert.Equal(t, "write_draft", w.Exec.Runs()[0].Tool)
	assert.JSONEq(t, string(sendEmail("finance@example.com").Args), string(w.Exec.Runs()[0].Args))

	n, err = w.Gate.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, n, "a swept ticket is not swept twice")
}

// escalatingGate returns a gate whose issue_refund goes to the support
// group and, after ten minutes, to the leads too, and the enrolled
// authenticator of erin, the one lead.
func escalatingGate(t *testing.T) (*stepuptest.Harness, *stepuptest.Authenticator) {
	t.Helper()
	cat, err := policy.NewCatalog("v1", policy.Tool{Name: "issue_refund", Class: "irreversible",
		Approvers: "support",
		Timeout:   plug.Timeout{After: 10 * time.Minute, Outcome: plug.OutcomeEscalate, EscalateTo: "leads"}})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat,
		gate.WithApproverGroup("support", stepuptest.Approver),
		gate.WithApproverGroup("leads", "user:erin"))
	return h, h.Enroll(t, "user:erin")
}

func TestTimeoutEscalates(t *testing.T) {
	ctx := context.Background()
	h, erin := escalatingGate(t)
	propose := func() stepup.TicketID {
		tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: []byte(`{"order":"A-17","amount":120}`),
			Session: "s", Principal: agentFor("user:carol")})
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		return tk.ID
	}
	id := propose()
	_, err := stepuptest.Approve(ctx, h.Gate.Desk(), erin, id, stepuptest.WithCredential(erin.CredentialIDs()[0]))
	assert.ErrorIs(t, err, stepup.ErrNotPermitted, "the lead is not asked during the first stage")

	h.Clock.Advance(10 * time.Minute)
	p, err := h.Gate.Desk().Prompt(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []string{stepuptest.Approver, "user:erin"}, p.Approvers)
	got, err := stepuptest.Approve(ctx, h.Gate.Desk(), erin, id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)

	late := propose()
	h.Clock.Advance(20 * time.Minute)
	got, err = h.Gate.Wait(ctx, late)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusCancelled, got.Status, "nobody decided in either stage")
}

// TestEscalatedTicketsJoinTheEscalationGroupsQueue: a ticket whose route
// escalates is in the first group's queue from the start and in the
// escalation group's from the end of the first stage, at every time
// tried around it, and leaves both once decided.
func TestEscalatedTicketsJoinTheEscalationGroupsQueue(t *testing.T) {
	ctx := context.Background()
	h, erin := escalatingGate(t)
	queued := func(approver string) []stepup.TicketID {
		q, err := h.Gate.Desk().Queue(ctx, approver, 50)
		require.NoError(t, err)
		var ids []stepup.TicketID
		for _, e := range q {
			ids = append(ids, e.Ticket.ID)
		}
		return ids
	}
	var ids []stepup.TicketID
	for i := range 3 {
		tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: []byte(fmt.Sprintf(`{"order":"A-%d","amount":120}`, i)),
			Session: "s", Principal: agentFor("user:carol")})
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		ids = append(ids, tk.ID)
		h.Clock.Advance(time.Minute)
	}
	// Ticket i escalates at 10-i minutes from now (+3 min since the first).
	for _, step := range []time.Duration{0, 6*time.Minute + 59*time.Second, time.Second, time.Minute, time.Minute} {
		h.Clock.Advance(step)
		elapsed := h.Clock.Now().Sub(stepuptest.Start())
		var want []stepup.TicketID
		for i, id := range ids {
			if elapsed >= time.Duration(10+i)*time.Minute {
				want = append(want, id)
			}
		}
		assert.Equal(t, ids, queued(stepuptest.Approver), "the first group's queue at +%v", elapsed)
		assert.Equal(t, want, queued("user:erin"), "the escalation group's queue at +%v", elapsed)
	}
	_, err := stepuptest.Approve(ctx, h.Gate.Desk(), erin, ids[0])
	require.NoError(t, err)
	assert.Equal(t, ids[1:], queued("user:erin"), "a decided ticket leaves the queue")
	assert.Equal(t, ids[1:], queued(stepuptest.Approver))
}

func TestPendingCapDenies(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithPendingCaps(stepupCaps(1)))
	pending(t, w, "finance@example.com")
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.org"))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Contains(t, tk.Reason, "too many requests")
}
