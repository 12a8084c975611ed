package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/sqlite"
)

// BenchmarkRoundTrip measures propose then execute of an allowed call
// (read_file) through the Client over loopback HTTP, against the same
// round trip on the in-process gate (the baseline), on store/memory and on
// store/sqlite (a file, synchronous commits).
func BenchmarkRoundTrip(b *testing.B) {
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`), Task: "t-42",
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"memory", func(*testing.B) store.Store { return memory.New(nil) }},
		{"sqlite", func(b *testing.B) store.Store {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "asu.db"), nil)
			require.NoError(b, err)
			b.Cleanup(func() { _ = st.Close() })
			return st
		}},
	}
	for _, s := range stores {
		st := s.open(b)
		gate, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithExecutor("read_file", &recorder{}),
			gate.WithDwell(0))
		require.NoError(b, err)
		api, err := gateway.NewAgentAPI(gate, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
		require.NoError(b, err)
		srv := httptest.NewServer(api)
		b.Cleanup(srv.Close)
		client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
		require.NoError(b, err)

		for _, rt := range []struct {
			name string
			rt   stepup.Runtime
		}{{"in-process", gate}, {"http-client", client}} {
			b.Run(s.name+"/"+rt.name, func(b *testing.B) {
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
}
