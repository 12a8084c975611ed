package stepuptest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

func ExampleNewAuthenticator() {
	a := stepuptest.NewAuthenticator("approve.example.com", "https://approve.example.com")
	reg, err := a.Register([]byte(`{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","rp":{"id":"approve.example.com"},"user":{"id":"AQ"}}`),
		stepuptest.WithAlgorithm(stepuptest.EdDSA))
	if err != nil {
		panic(err)
	}
	var resp struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(reg, &resp)
	fmt.Println(resp.Type, len(a.CredentialIDs()))
	// Output: public-key 1
}

func ExampleNewClock() {
	c := stepuptest.NewClock(time.Date(2026, 10, 30, 9, 0, 0, 0, time.UTC))
	c.Advance(20 * time.Minute)
	fmt.Println(c.Now().Format(time.Kitchen))
	// Output: 9:20AM
}

func ExampleSeedCatalog() {
	d, _ := stepuptest.SeedCatalog().Decide(context.Background(),
		plug.Proposal{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":900}`)})
	fmt.Println(d.Verdict, d.Reason, d.PolicyVersion)
	// Output: deny over the per-call limit 2026-10-30.1
}

func ExampleEnroll() {
	mem := memory.New(nil)
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(mem), "user:dana")
	if err != nil {
		panic(err)
	}
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	tk, err = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	fmt.Println(tk.Status, err)
	// Output: approved <nil>
}

func ExampleHarness_Grant() {
	clock := stepuptest.NewClock(stepuptest.Start())
	mem := stepuptest.Memory(clock)
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(mem), stepuptest.Approver)
	if err != nil {
		panic(err)
	}
	h := &stepuptest.Harness{Gate: g, Clock: clock, Authenticator: dana}
	call := stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}}
	d, err := canon.Effect{Tool: call.Tool, Args: call.Args, Principal: call.Principal,
		PolicyVersion: stepuptest.SeedPolicyVersion, Audience: "send_email"}.Digest()
	if err != nil {
		panic(err)
	}
	id, err := h.Grant(gate.GrantSpec{Grant: grant.Exact(d), Uses: 1, ExpiresAt: clock.Now().Add(time.Hour)})
	if err != nil {
		panic(err)
	}
	call.Grant = id
	tk, _ := g.Propose(ctx, call)
	fmt.Println(tk.Status)
	// Output: approved
}

// ExampleSeedDecisions runs the reference policy table through a runtime
// (here an in-process gate; a remote client works alike).
func ExampleSeedDecisions() {
	mem := memory.New(nil)
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	var rt stepup.Runtime = g
	for _, d := range stepuptest.SeedDecisions() {
		tk, err := rt.Propose(context.Background(), stepup.Call{Tool: d.Tool, Args: json.RawMessage(d.Args),
			Session: "s", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		fmt.Println(d.Tool, err == nil && tk.Status == d.Status && tk.Reason == d.Reason)
	}
	// Output:
	// read_file true
	// write_draft true
	// send_email true
	// issue_refund true
	// run_shell true
}
