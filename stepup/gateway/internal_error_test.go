package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// failing is a runtime whose store fails with a message naming a path.
type failing struct{}

var errStoreDetail = fmt.Errorf("execute: %w: open /var/lib/asu/secret.db: disk full", stepup.ErrStore)

func (failing) Propose(context.Context, stepup.Call) (stepup.Ticket, error) {
	return stepup.Ticket{}, errStoreDetail
}
func (failing) Wait(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{}, context.Canceled
}
func (failing) Execute(context.Context, stepup.TicketID) (stepup.Result, error) {
	return stepup.Result{}, errStoreDetail
}

func (failing) Cancel(context.Context, stepup.TicketID, string) (stepup.Ticket, error) {
	return stepup.Ticket{}, errStoreDetail
}

func (failing) Ticket(_ context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{ID: id, Status: stepup.StatusApproved}, nil
}

func (failing) Requester(context.Context, stepup.TicketID) (canon.Principal, error) {
	return canon.Principal{User: "user:dana", Agent: "agent:reports"}, nil
}

// TestStoreErrorsSayNothing: a store failure reaches the runtime as
// "store" (503), so errors.Is(err, stepup.ErrStore) holds on the client
// as it does in process, with no detail; the detail is in the server's
// log only.
func TestStoreErrorsSayNothing(t *testing.T) {
	var logs bytes.Buffer
	api, err := gateway.NewAgentAPI(failing{}, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}},
		&gateway.AgentOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	client, err := remote.NewClient(srv.URL, agentToken, nil)
	require.NoError(t, err)

	_, err = client.Execute(context.Background(), "t1")
	require.Error(t, err)
	assert.ErrorIs(t, err, stepup.ErrStore)
	assert.False(t, errors.Is(err, remote.ErrInternal), "a store failure has its own code")
	assert.NotContains(t, err.Error(), "/var/lib/asu")
	var e *remote.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, remote.CodeStore, e.Code)
	assert.Equal(t, 503, e.Status)
	assert.Empty(t, e.Message)
	assert.Contains(t, logs.String(), "disk full", "the operator sees the detail")

	_, err = client.Propose(context.Background(), sendEmail("finance@example.com"))
	assert.ErrorIs(t, err, stepup.ErrStore)
	assert.NotContains(t, logs.String(), "finance@example.com", "arguments never reach the log")
}

// failingTool is a runtime whose tool fails with a message quoting the call.
type failingTool struct{ failing }

func (failingTool) Execute(context.Context, stepup.TicketID) (stepup.Result, error) {
	return stepup.Result{}, fmt.Errorf("execute: %w: smtp: 550 no such user finance@example.com", stepup.ErrExecutorFailed)
}

// TestExecutorErrorsSayNothing: an executor's failure reaches the runtime as
// "executor_failed", so errors.Is(err, stepup.ErrExecutorFailed) holds on the
// client, but the executor's text (the integrator's, which may quote the
// call) is neither answered nor logged.
func TestExecutorErrorsSayNothing(t *testing.T) {
	var logs bytes.Buffer
	api, err := gateway.NewAgentAPI(failingTool{}, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}},
		&gateway.AgentOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	client, err := remote.NewClient(srv.URL, agentToken, nil)
	require.NoError(t, err)

	_, err = client.Execute(context.Background(), "t1")
	require.ErrorIs(t, err, stepup.ErrExecutorFailed)
	var e *remote.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, remote.CodeExecutor, e.Code)
	assert.Equal(t, 502, e.Status)
	assert.NotContains(t, err.Error(), "finance@example.com")
	assert.Contains(t, logs.String(), "executor_failed")
	assert.NotContains(t, logs.String(), "finance@example.com", "the executor's text never reaches the log")
}
