package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// BenchmarkRoundTrip measures propose then execute of an allowed call
// (read_file) through the Client over loopback HTTP, against the same
// round trip on the in-process gate (the baseline), on store/memory.
func BenchmarkRoundTrip(b *testing.B) {
	exec := &recorder{}
	h := stepuptest.NewGate(b, nil, stepup.WithExecutor("read_file", exec))
	api, err := gateway.NewAgentAPI(h.Gate, h.Store, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports"}}, nil)
	require.NoError(b, err)
	srv := httptest.NewServer(api)
	defer srv.Close()
	client, err := gateway.NewClient(srv.URL, agentToken, srv.Client())
	require.NoError(b, err)
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`), Task: "t-42",
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}

	for _, rt := range []struct {
		name string
		rt   stepup.Runtime
	}{{"in-process", h.Gate}, {"http-client", client}} {
		b.Run(rt.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				tk, err := rt.rt.Propose(ctx, call)
				if err != nil || tk.Status != stepup.StatusAllowed {
					b.Fatalf("propose: %v %s", err, tk.Status)
				}
				if _, err := rt.rt.Execute(ctx, tk.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
