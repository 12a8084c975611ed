package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// newGate is the gate of the examples: the reference program's catalog on store/memory.
func newGate() (*gate.Gate, *memory.Store) {
	st := memory.New(nil)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st),
		gate.WithExecutor("read_file", plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			return []byte(`{"rows":2}`), nil
		})))
	if err != nil {
		panic(err)
	}
	return g, st
}

// A runtime holds a Client where it would hold an in-process gate.
func ExampleNewClient() {
	g, _ := newGate()
	token, _ := gateway.NewRuntimeToken()
	api, _ := gateway.NewAgentAPI(g, []gateway.RuntimeToken{{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	srv := httptest.NewServer(api)
	defer srv.Close()

	var rt stepup.Runtime
	rt, _ = remote.NewClient(srv.URL, token, nil)
	ctx := context.Background()
	tk, _ := rt.Propose(ctx, stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	fmt.Println(tk.Status)
	res, _ := rt.Execute(ctx, tk.ID)
	fmt.Println(string(res.Output))
	_, err := rt.Execute(ctx, tk.ID)
	fmt.Println(errors.Is(err, stepup.ErrConsumed))
	// Output:
	// allowed
	// {"rows":2}
	// true
}
