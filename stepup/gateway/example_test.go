package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// newGate is the gate of the examples: the reference program's catalog on store/memory.
func newGate() (*gate.Gate, *memory.Store) {
	st := memory.New()
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.RP(),
		gate.WithExecutor("read_file", gate.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			return []byte(`{"rows":2}`), nil
		})))
	if err != nil {
		panic(err)
	}
	return g, st
}

// A runtime holds a Client where it would hold an in-process gate.
func ExampleNewClient() {
	gate, st := newGate()
	token, _ := gateway.NewRuntimeToken()
	api, _ := gateway.NewAgentAPI(gate, st, []gateway.RuntimeToken{{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	srv := httptest.NewServer(api)
	defer srv.Close()

	var rt stepup.Runtime
	rt, _ = gateway.NewClient(srv.URL, token, nil)
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

// The agent API refuses a call that names another agent than its token's.
func ExampleNewAgentAPI() {
	gate, st := newGate()
	token, _ := gateway.NewRuntimeToken()
	api, _ := gateway.NewAgentAPI(gate, st, []gateway.RuntimeToken{{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}},
		&gateway.AgentOptions{MaxWait: gateway.DefaultMaxWait})
	srv := httptest.NewServer(api)
	defer srv.Close()

	client, _ := gateway.NewClient(srv.URL, token, nil)
	_, err := client.Propose(context.Background(), stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:billing"}})
	var e *gateway.Error
	fmt.Println(errors.Is(err, gateway.ErrForbidden), errors.As(err, &e) && e.Code == gateway.CodeForbidden)
	// Output: true true
}

// The approval site is served on the relying party's origin; invites to
// enroll a passkey are minted from Go, never over HTTP.
func ExampleNewSite() {
	gate, st := newGate()
	site, _ := gateway.NewSite(gate, st, stepuptest.RP(), nil)
	_ = site // serve it on stepuptest.RP().Origin, e.g. with NewServer and Serve

	link, _ := gateway.InviteLink(context.Background(), gate.Admin(), stepuptest.RP().Origin, "user:dana")
	fmt.Println(link[:len("https://approve.example.com/enroll?invite=")])
	// Output: https://approve.example.com/enroll?invite=
}

// InviteLink refuses agents: approvers are people.
func ExampleInviteLink() {
	gate, _ := newGate()
	_, err := gateway.InviteLink(context.Background(), gate.Admin(), stepuptest.RP().Origin, "agent:reports")
	fmt.Println(errors.Is(err, stepup.ErrNotPermitted))
	// Output: true
}

// ApprovalLink is what a notifier sends the approver: a link, never the
// card.
func ExampleApprovalLink() {
	fmt.Println(gateway.ApprovalLink("https://approve.example.com", "5f1c"))
	// Output: https://approve.example.com/approve/5f1c
}

// A deny challenge is never an approve challenge.
func ExampleDenyChallenge() {
	var approve [32]byte
	deny := gateway.DenyChallenge(approve)
	fmt.Println(deny != approve, deny == gateway.DenyChallenge(approve))
	// Output: true true
}

// NewRuntimeToken makes a fresh token for one runtime.
func ExampleNewRuntimeToken() {
	token, _ := gateway.NewRuntimeToken()
	fmt.Println(len(token))
	// Output: 43
}

// Serve runs a server until its context ends, then shuts it down
// gracefully; NewServer sets its timeouts above the long-poll bound.
func ExampleServe() {
	gate, st := newGate()
	token, _ := gateway.NewRuntimeToken()
	api, _ := gateway.NewAgentAPI(gate, st, []gateway.RuntimeToken{{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := gateway.NewServer(api, api.MaxWait())
	go func() { done <- gateway.Serve(ctx, srv, ln) }()
	fmt.Println(srv.WriteTimeout > api.MaxWait())
	cancel()
	fmt.Println(<-done)
	// Output:
	// true
	// <nil>
}
