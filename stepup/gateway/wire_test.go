package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// echo is a runtime that records the call it got and answers with a fixed
// ticket.
type echo struct {
	got    stepup.Call
	answer stepup.Ticket
}

func (e *echo) Propose(_ context.Context, c stepup.Call) (stepup.Ticket, error) {
	e.got = c
	return e.answer, nil
}
func (e *echo) Wait(context.Context, stepup.TicketID) (stepup.Ticket, error) { return e.answer, nil }
func (e *echo) Execute(context.Context, stepup.TicketID) (stepup.Result, error) {
	return stepup.Result{}, nil
}
func (e *echo) Cancel(context.Context, stepup.TicketID, string) (stepup.Ticket, error) {
	return e.answer, nil
}
func (e *echo) Ticket(context.Context, stepup.TicketID) (stepup.Ticket, error) { return e.answer, nil }
func (e *echo) Requester(context.Context, stepup.TicketID) (canon.Principal, error) {
	return canon.Principal{User: "user:dana", Agent: "agent:reports"}, nil
}

// TestWireRoundTrip: every field of a call reaches the gate as the
// runtime sent it, and every field of the ticket reaches the runtime.
func TestWireRoundTrip(t *testing.T) {
	call := stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com","n":19.99}`),
		Task: "t-42", Step: "s-1", Session: "sess-1",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports", Delegations: []string{"agent:planner"}},
		Taint:     []string{"read web page https://example.org/offer"}, Rationale: "asked by Dana", Grant: "g-1"}
	answer := stepup.Ticket{ID: "t1", Status: stepup.StatusDenied, Tool: "send_email",
		Digest: canon.Sum([]byte("x")), Reason: "rate limited", ExpiresAt: time.Date(2026, 10, 30, 9, 15, 0, 0, time.UTC),
		Next: "t2", RetryAfter: 1500 * time.Millisecond}
	rt := &echo{answer: answer}
	api, err := gateway.NewAgentAPI(rt, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	client, err := remote.NewClient(srv.URL, agentToken, nil)
	require.NoError(t, err)

	got, err := client.Propose(context.Background(), call)
	require.NoError(t, err)
	want := call
	want.Args, err = canon.Canonicalize(call.Args) // the same value, in the form the gate hashes
	require.NoError(t, err)
	assert.Equal(t, want, rt.got)
	assert.Equal(t, answer.ExpiresAt, got.ExpiresAt.UTC())
	got.ExpiresAt = answer.ExpiresAt
	assert.Equal(t, answer, got)
}

// TestFailedRunReadsFailedOverHTTP: a call whose tool failed reads as
// failed through the client, not as executed, and Execute's error tells
// the runtime the tool ran and failed.
func TestFailedRunReadsFailedOverHTTP(t *testing.T) {
	h := stepuptest.NewGate(t, nil, gate.WithExecutor("read_file", plug.ExecutorFunc(
		func(context.Context, canon.Effect, string) ([]byte, error) { return nil, errors.New("disk on fire") })))
	api, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{
		{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
	require.NoError(t, err)
	ctx := context.Background()
	tk, err := client.Propose(ctx, stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Task: "t-42", Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)
	_, err = client.Execute(ctx, tk.ID)
	require.ErrorIs(t, err, stepup.ErrExecutorFailed)
	got, err := client.Wait(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusFailed, got.Status)
}
