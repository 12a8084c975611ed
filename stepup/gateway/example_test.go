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
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// newGate is the gate of the examples: the reference program's catalog on store/memory.
func newGate() (*gate.Gate, *memory.Store) {
	st := memory.New(nil)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0),
		gate.WithExecutor("read_file", plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			return []byte(`{"rows":2}`), nil
		})))
	if err != nil {
		panic(err)
	}
	return g, st
}

// The agent API refuses a call that names another agent than its token's.
func ExampleNewAgentAPI() {
	gate, _ := newGate()
	token, _ := gateway.NewRuntimeToken()
	api, _ := gateway.NewAgentAPI(gate, []gateway.RuntimeToken{{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}},
		&gateway.AgentOptions{MaxWait: gateway.DefaultMaxWait})
	srv := httptest.NewServer(api)
	defer srv.Close()

	client, _ := remote.NewClient(srv.URL, token, nil)
	_, err := client.Propose(context.Background(), stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:billing"}})
	var e *remote.Error
	fmt.Println(errors.Is(err, remote.ErrForbidden), errors.As(err, &e) && e.Code == remote.CodeForbidden)
	// Output: true true
}

// The approval site is served on the relying party's origin; invites to
// enroll a passkey are minted from Go, never over HTTP.
func ExampleNewSite() {
	gate, st := newGate()
	site, _ := gateway.NewSite(gate.Desk(), stepuptest.Enrollment(st), stepuptest.RP(), nil)
	_ = site // serve it on stepuptest.RP().Origin, e.g. with NewServer and Serve

	link, _ := gateway.InviteLink(context.Background(), stepuptest.Enrollment(st), stepuptest.RP().Origin, "user:dana")
	fmt.Println(link[:len("https://approve.example.com/enroll?invite=")])
	// Output: https://approve.example.com/enroll?invite=
}

// InviteLink refuses agents: approvers are people.
func ExampleInviteLink() {
	_, st := newGate()
	_, err := gateway.InviteLink(context.Background(), stepuptest.Enrollment(st), stepuptest.RP().Origin, "agent:reports")
	fmt.Println(errors.Is(err, stepup.ErrNotPermitted))
	// Output: true
}

// ApprovalLink is what a notifier sends the approver: a link, never the
// card.
func ExampleApprovalLink() {
	fmt.Println(gateway.ApprovalLink("https://approve.example.com", "5f1c"))
	// Output: https://approve.example.com/approve/5f1c
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
	gate, _ := newGate()
	token, _ := gateway.NewRuntimeToken()
	api, _ := gateway.NewAgentAPI(gate, []gateway.RuntimeToken{{Token: token, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
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

// A gateway may keep runtime tokens only hashed: print the token once,
// store its hash, and configure the agent API with the hash alone.
func ExampleHashRuntimeToken() {
	gate, _ := newGate()
	token, _ := gateway.NewRuntimeToken()
	hash := gateway.HashRuntimeToken(token) // store this, not the token
	api, err := gateway.NewAgentAPI(gate, []gateway.RuntimeToken{{SHA256: hash, Agent: "agent:reports",
		Users: []string{"user:dana"}}}, nil)
	fmt.Println(api != nil, err)
	// Output: true <nil>
}
