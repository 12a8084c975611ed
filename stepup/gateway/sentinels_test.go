package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// switchGate answers every runtime call with the error it holds now.
type switchGate struct {
	mu  sync.Mutex
	err error
}

func (g *switchGate) set(err error) { g.mu.Lock(); g.err = err; g.mu.Unlock() }
func (g *switchGate) get() error    { g.mu.Lock(); defer g.mu.Unlock(); return g.err }

func (g *switchGate) Propose(context.Context, stepup.Call) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.get()
}
func (g *switchGate) Wait(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.get()
}
func (g *switchGate) Execute(context.Context, stepup.TicketID) (stepup.Result, error) {
	return stepup.Result{}, g.get()
}
func (g *switchGate) Cancel(context.Context, stepup.TicketID, string) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.get()
}
func (g *switchGate) Ticket(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.get()
}
func (g *switchGate) Requester(context.Context, stepup.TicketID) (canon.Principal, error) {
	return canon.Principal{User: "user:dana", Agent: "agent:reports"}, nil
}

// allSentinels is every sentinel of the runtime's contract and of the
// HTTP layer.
var allSentinels = []error{
	stepup.ErrNotFound, stepup.ErrNotApproved, stepup.ErrConsumed, stepup.ErrExpired, stepup.ErrRevoked,
	stepup.ErrResolved, stepup.ErrPolicyChanged, stepup.ErrEffectChanged, stepup.ErrBadAssertion,
	stepup.ErrNotPermitted, stepup.ErrTooFast, stepup.ErrExecutorFailed, stepup.ErrOutcomeUnknown,
	stepup.ErrNoExecutor, stepup.ErrConfig, stepup.ErrStore,
	remote.ErrUnauthorized, remote.ErrForbidden, remote.ErrInvalid, remote.ErrTooLarge, remote.ErrBusy,
	remote.ErrUnavailable,
}

// TestEverySentinelCrossesTheWire: for every sentinel alone, and for
// every pair of them wrapped into one error, errors.Is answers the same
// for the gate's error and for the client's, for every sentinel; and an
// error that wraps stepup.ErrStore or stepup.ErrConfig never carries its
// text (a driver's host, user or file) to the client, whatever its code.
func TestEverySentinelCrossesTheWire(t *testing.T) {
	g := &switchGate{}
	api, err := gateway.NewAgentAPI(g, []gateway.RuntimeToken{
		{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
	require.NoError(t, err)

	const secret = "db-7.internal.example:5432 user asu_gate"
	var cases []error
	for _, a := range allSentinels {
		cases = append(cases, fmt.Errorf("execute: %w: %s", a, secret))
		for _, b := range allSentinels {
			cases = append(cases, fmt.Errorf("execute: %w: %w: %s", a, b, secret))
		}
	}
	for _, local := range cases {
		g.set(local)
		_, wire := client.Execute(context.Background(), "t-1")
		require.Error(t, wire)
		for _, s := range allSentinels {
			assert.Equal(t, errors.Is(local, s), errors.Is(wire, s),
				"errors.Is(err, %v) differs across the wire: the gate said %q, the client %q", s, local, wire)
		}
		if errors.Is(local, stepup.ErrStore) || errors.Is(local, stepup.ErrConfig) {
			assert.NotContains(t, wire.Error(), secret, "a store's or configuration's text crossed the wire")
		}
	}

	// The store's own code and status.
	g.set(fmt.Errorf("propose: %w: %s", stepup.ErrStore, secret))
	_, err = client.Propose(context.Background(), stepup.Call{Tool: "t", Session: "s",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	var e *remote.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, remote.CodeStore, e.Code)
	assert.Equal(t, 503, e.Status)
	assert.Empty(t, e.Message)
}
