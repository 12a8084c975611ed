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
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// BenchmarkHop measures what the gateway and the client add to a round
// trip (propose then execute of a small allowed call) above the floor of
// any HTTP hop: each iteration runs the round trip in process, through
// the client over loopback, and two bare loopback requests of the same
// shape to a handler that does nothing, one after the other, so that
// load on the machine falls on all three alike. above-floor is
// (through HTTP - in process - floor) / floor.
func BenchmarkHop(b *testing.B) {
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`), Task: "t-42",
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	st := memory.New(nil)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithExecutor("read_file", &recorder{}),
		gate.WithDwell(0), gate.WithoutFloodControlUnsafe())
	require.NoError(b, err)
	api, err := gateway.NewAgentAPI(g, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(b, err)
	srv := httptest.NewServer(api)
	b.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
	require.NoError(b, err)
	floor2 := bareFloor(b)
	ctx := context.Background()
	roundTrip := func(rt stepup.Runtime) {
		tk, err := rt.Propose(ctx, call)
		if err != nil || tk.Status != stepup.StatusAllowed {
			b.Fatalf("propose: %v %s", err, tk.Status)
		}
		if _, err := rt.Execute(ctx, tk.ID); err != nil {
			b.Fatal(err)
		}
	}
	var in, through, floor time.Duration
	for b.Loop() {
		t0 := time.Now()
		roundTrip(g)
		t1 := time.Now()
		roundTrip(client)
		t2 := time.Now()
		floor2()
		in, through, floor = in+t1.Sub(t0), through+t2.Sub(t1), floor+time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(in.Nanoseconds())/n, "in-process-ns/op")
	b.ReportMetric(float64(through.Nanoseconds())/n, "http-ns/op")
	b.ReportMetric(float64(floor.Nanoseconds())/n, "floor-ns/op")
	b.ReportMetric(float64(through-in-floor)/float64(floor), "above-floor")
}
