package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
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
// through the Client over loopback HTTP, against the same round trip on
// the in-process gate (the baseline), on store/memory and on store/sqlite
// (a file, synchronous commits). The call is a small read_file; on memory
// also write_draft calls of 16 and 128 KB, where the work that grows with
// the call weighs more than the hop's fixed cost.
func BenchmarkRoundTrip(b *testing.B) {
	small := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`), Task: "t-42",
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	draftOf := func(size int) stepup.Call {
		d := small
		d.Tool = "write_draft"
		d.Args = json.RawMessage(fmt.Sprintf(`{"to":"finance@example.com","body":%q}`,
			strings.Repeat("Quarterly numbers attached. ", size/28)))
		return d
	}
	stores := []struct {
		name  string
		open  func(b *testing.B) store.Store
		calls map[string]stepup.Call
	}{
		{"memory", func(*testing.B) store.Store { return memory.New(nil) },
			map[string]stepup.Call{"": small, "16KB/": draftOf(16 << 10), "128KB/": draftOf(128 << 10)}},
		{"sqlite", func(b *testing.B) store.Store {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "asu.db"), nil)
			require.NoError(b, err)
			b.Cleanup(func() { _ = st.Close() })
			return st
		}, map[string]stepup.Call{"": small}},
	}
	for _, s := range stores {
		st := s.open(b)
		gate, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithExecutor("read_file", &recorder{}),
			gate.WithExecutor("write_draft", &recorder{}), gate.WithDwell(0))
		require.NoError(b, err)
		api, err := gateway.NewAgentAPI(gate, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
		require.NoError(b, err)
		srv := httptest.NewServer(api)
		b.Cleanup(srv.Close)
		client, err := remote.NewClient(srv.URL, agentToken, srv.Client())
		require.NoError(b, err)

		for size, call := range s.calls {
			for _, rt := range []struct {
				name string
				rt   stepup.Runtime
			}{{"in-process", gate}, {"http-client", client}} {
				b.Run(s.name+"/"+size+rt.name, func(b *testing.B) {
					ctx := context.Background()
					b.SetBytes(int64(len(call.Args)))
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
}

// BenchmarkRoundTrip_netHTTP is the floor under the HTTP hop: two bare
// requests of the same shape (a bearer token, a small JSON body, a small
// JSON answer) over loopback to a handler that does nothing else. What the
// hop costs above the in-process round trip is this floor plus the
// gateway's and the client's own work.
func BenchmarkRoundTrip_netHTTP(b *testing.B) {
	floor := bareFloor(b)
	for b.Loop() {
		floor()
	}
}
