package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// stubGate answers at once, so that a hop through it costs only the
// gateway, the client and HTTP.
type stubGate struct{}

const stubID = "0123456789abcdef0123456789abcdef"

func (stubGate) Propose(_ context.Context, c stepup.Call) (stepup.Ticket, error) {
	return stepup.Ticket{ID: stubID, Status: stepup.StatusAllowed, Tool: c.Tool}, nil
}
func (stubGate) Wait(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{ID: stubID, Status: stepup.StatusAllowed, Tool: "read_file"}, nil
}
func (stubGate) Execute(_ context.Context, id stepup.TicketID) (stepup.Result, error) {
	return stepup.Result{Ticket: id, Output: json.RawMessage(`{"ok":true}`), IdempotencyKey: "k"}, nil
}
func (stubGate) Cancel(context.Context, stepup.TicketID, string) (stepup.Ticket, error) {
	return stepup.Ticket{}, stepup.ErrResolved
}
func (stubGate) Ticket(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{ID: stubID, Status: stepup.StatusAllowed, Tool: "read_file"}, nil
}
func (stubGate) Requester(context.Context, stepup.TicketID) (canon.Principal, error) {
	return canon.Principal{User: "user:dana", Agent: "agent:reports"}, nil
}

// BenchmarkHopLayer is BenchmarkHop without the gate: the client and the
// gateway over a gate that answers at once, against two bare loopback
// requests of the same shape, interleaved. above-floor is (through HTTP -
// floor) / floor: what the gateway and the client add to the transport,
// free of the gate's own work and of its variance.
func BenchmarkHopLayer(b *testing.B) {
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`), Task: "t-42",
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	api, err := gateway.NewAgentAPI(stubGate{}, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(b, err)
	srv := httptest.NewServer(api)
	b.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
	require.NoError(b, err)
	bare := bareFloor(b)
	ctx := context.Background()
	var through, floor time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		tk, err := client.Propose(ctx, call)
		if err != nil || tk.Status != stepup.StatusAllowed {
			b.Fatalf("propose: %v %s", err, tk.Status)
		}
		if _, err := client.Execute(ctx, tk.ID); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		bare()
		through, floor = through+t1.Sub(t0), floor+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(through.Nanoseconds())/n, "http-ns/op")
	b.ReportMetric(float64(floor.Nanoseconds())/n, "floor-ns/op")
	b.ReportMetric(float64(through-floor)/float64(floor), "above-floor")
}
