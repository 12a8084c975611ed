package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// refusingGate answers every runtime call with err, for a ticket of
// agent:reports acting for user:dana.
type refusingGate struct{ err error }

func (g refusingGate) Propose(context.Context, stepup.Call) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.err
}
func (g refusingGate) Wait(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.err
}
func (g refusingGate) Execute(context.Context, stepup.TicketID) (stepup.Result, error) {
	return stepup.Result{}, g.err
}
func (g refusingGate) Cancel(context.Context, stepup.TicketID, string) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.err
}
func (g refusingGate) Ticket(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{}, g.err
}
func (g refusingGate) Requester(context.Context, stepup.TicketID) (canon.Principal, error) {
	return canon.Principal{User: "user:dana", Agent: "agent:reports"}, nil
}

// TestExecuteOutcomesCrossTheWire: stepup documents what an Execute error
// says about the effect by the sentinels it wraps; "ErrStore when it does
// not also wrap ErrOutcomeUnknown" means not run, safe to propose again.
// The client promises that errors.Is holds the same on either side of the
// wire. For each documented outcome, alone and as the gate combines
// them, every one of those sentinels answers errors.Is the same for the
// error the gate returned and for the one the client returns.
func TestExecuteOutcomesCrossTheWire(t *testing.T) {
	sentinels := []error{stepup.ErrNotFound, stepup.ErrNotApproved, stepup.ErrExpired, stepup.ErrRevoked,
		stepup.ErrPolicyChanged, stepup.ErrEffectChanged, stepup.ErrNoExecutor, stepup.ErrStore,
		stepup.ErrConsumed, stepup.ErrExecutorFailed, stepup.ErrOutcomeUnknown}
	var outcomes []error
	for _, s := range sentinels {
		outcomes = append(outcomes, fmt.Errorf("execute: %w", s))
	}
	outcomes = append(outcomes,
		fmt.Errorf("execute: %w: %w: connection refused", stepup.ErrOutcomeUnknown, stepup.ErrStore),
		fmt.Errorf("execute: %w: %w", stepup.ErrStore, stepup.ErrNotFound),
		fmt.Errorf("execute: %w: %w", stepup.ErrExecutorFailed, errors.New("smtp: 550")))
	for _, local := range outcomes {
		t.Run(local.Error(), func(t *testing.T) {
			api, err := gateway.NewAgentAPI(refusingGate{local}, []gateway.RuntimeToken{
				{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
			require.NoError(t, err)
			srv := httptest.NewServer(api)
			t.Cleanup(srv.Close)
			client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
			require.NoError(t, err)
			_, wire := client.Execute(context.Background(), "t-1")
			require.Error(t, wire)
			for _, s := range sentinels {
				assert.Equal(t, errors.Is(local, s), errors.Is(wire, s),
					"errors.Is(err, %v) differs across the wire: the gate said %q, the client %q", s, local, wire)
			}
		})
	}
}

// failingConsume is the memory store whose Consume fails the way a
// database driver does, naming its host, its user and a path.
type failingConsume struct {
	*memory.Store
	text string
}

func (s failingConsume) Consume(context.Context, string, store.Claim, store.Note) (store.Approval, error) {
	return store.Approval{}, errors.New(s.text)
}

// TestStoreErrorTextStaysOnTheServer: a store's or driver's error text
// may name hosts, users and paths, so the agent API keeps it in the
// server's log (the error table marks store failures as no detail). When
// the store fails as Execute spends the approval, the gate wraps the
// driver's text into an outcome-unknown error, and that row's message is
// answered in full: the runtime reads the database's address.
func TestStoreErrorTextStaysOnTheServer(t *testing.T) {
	secrets := []string{
		`dial tcp db-7.internal.example:5432: connect: connection refused`,
		`pq: password authentication failed for user "asu_gate"`,
		`open data/asu.db-wal: disk I/O error`,
	}
	for _, secret := range secrets {
		t.Run(secret, func(t *testing.T) {
			clock := stepuptest.NewClock(stepuptest.Start())
			st := failingConsume{memory.New(&memory.Options{Clock: clock.Now}), secret}
			approver, err := passkey.New(st, stepuptest.RP(), passkey.RequireSeal(stepuptest.SealKey()))
			require.NoError(t, err)
			g, err := gate.New(st, stepuptest.SeedCatalog(), approver, gate.WithLocalClock(clock.Now),
				gate.WithExecutor("read_file", &recorder{}))
			require.NoError(t, err)
			api, err := gateway.NewAgentAPI(g, []gateway.RuntimeToken{
				{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
			require.NoError(t, err)
			srv := httptest.NewServer(api)
			t.Cleanup(srv.Close)
			client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
			require.NoError(t, err)
			ctx := context.Background()
			tk, err := client.Propose(ctx, stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
				Session: "s", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusAllowed, tk.Status, tk.Reason)
			_, err = client.Execute(ctx, tk.ID)
			require.ErrorIs(t, err, stepup.ErrOutcomeUnknown)
			assert.NotContains(t, err.Error(), secret, "the store's error text reached the runtime")
		})
	}
}
