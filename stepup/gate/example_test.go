package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// exampleGate builds a gate with one enrolled approver for the examples.
func exampleGate() (*gate.Gate, *stepuptest.Authenticator, *stepuptest.Clock) {
	clock := stepuptest.NewClock(stepuptest.Start())
	send := plug.ExecutorFunc(func(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
		return []byte(`{"sent":true}`), nil
	})
	mem := stepuptest.Memory(clock)
	// The examples' approver answers at once; a deployed gate keeps its
	// dwell time (see ExampleWithDwell).
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem),
		gate.WithExecutor("send_email", send), gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	approver, err := stepuptest.Enroll(context.Background(), stepuptest.Enrollment(mem), "user:dana")
	if err != nil {
		panic(err)
	}
	return g, approver, clock
}

func ExampleNew() {
	cat, err := policy.NewCatalog("2026-11-01.1",
		policy.Tool{Name: "send_email", Title: "Send e-mail", Class: card.ClassExternal})
	if err != nil {
		panic(err)
	}
	st := memory.New(nil)
	approver, err := passkey.New(st, passkey.RelyingParty{ID: "approve.example.com", Origin: "https://approve.example.com"})
	if err != nil {
		panic(err)
	}
	g, err := gate.New(st, cat, approver, gate.WithTTL(10*time.Minute))
	fmt.Println(g != nil, err)
	// Output: true <nil>
}

func ExampleGate_Propose() {
	g, _, _ := exampleGate()
	ctx := context.Background()
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path":"q3.csv"}`},
		{"send_email", `{"to":"finance@example.com","subject":"Q3 summary"}`},
		{"issue_refund", `{"order":"A-17","amount":900}`},
		{"run_shell", `{"cmd":"curl ..."}`},
	} {
		tk, err := g.Propose(ctx, stepup.Call{Tool: c.tool, Args: json.RawMessage(c.args),
			Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		if err != nil {
			panic(err)
		}
		fmt.Println(c.tool, tk.Status, tk.Reason)
	}
	// Output:
	// read_file allowed read effect
	// send_email pending external effect
	// issue_refund denied over the per-call limit
	// run_shell denied unknown tool
}

func ExampleGate_Execute() {
	g, approver, _ := exampleGate()
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	fmt.Println(tk.Status)
	if _, err := stepuptest.Approve(ctx, g.Desk(), approver, tk.ID); err != nil {
		panic(err)
	}
	tk, _ = g.Wait(ctx, tk.ID)
	fmt.Println(tk.Status)
	res, err := g.Execute(ctx, tk.ID)
	fmt.Println(string(res.Output), err)
	_, err = g.Execute(ctx, tk.ID)
	fmt.Println(err)
	// Output:
	// pending
	// approved
	// {"sent":true} <nil>
	// execute: stepup: approval already used
}

func ExampleDesk_Prompt() {
	g, _, _ := exampleGate()
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	p, err := g.Desk().Prompt(ctx, tk.ID)
	if err != nil {
		panic(err)
	}
	var opts struct {
		RPID             string `json:"rpId"`
		UserVerification string `json:"userVerification"`
		Allow            []any  `json:"allowCredentials"`
	}
	_ = json.Unmarshal(p.Options, &opts)
	fmt.Println(opts.RPID, opts.UserVerification, len(opts.Allow), p.Approvers)
	// Output: approve.example.com required 1 [user:dana]
}

func ExampleDesk_Deny() {
	g, dana, _ := exampleGate()
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	tk, err := stepuptest.Deny(ctx, g.Desk(), dana, tk.ID, "wrong quarter")
	fmt.Println(tk.Status, tk.Reason, err)
	// Output: denied denied by user:dana: wrong quarter <nil>
}

func ExampleGate_Sweep() {
	g, _, clock := exampleGate()
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	clock.Advance(15 * time.Minute)
	n, _ := g.Sweep(ctx)
	tk, _ = g.Ticket(ctx, tk.ID)
	next, _ := g.Ticket(ctx, tk.Next)
	fmt.Println(n, tk.Status, next.Tool, next.Status)
	// Output: 1 cancelled write_draft allowed
}

func ExampleNewCatalog() {
	cat, err := policy.NewCatalog("2026-11-01.1",
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
			Schema: json.RawMessage(`{"type":"object","required":["amount"]}`),
			Limits: []policy.Limit{policy.MaxAmount("amount", "500")}})
	if err != nil {
		panic(err)
	}
	for _, args := range []string{`{"amount":120}`, `{"amount":900}`} {
		d, _ := cat.Decide(context.Background(), plug.Proposal{Tool: "issue_refund", Args: json.RawMessage(args)})
		fmt.Println(d.Verdict, d.Reason)
	}
	// Output:
	// needs_approval irreversible effect
	// deny over the per-call limit
}
