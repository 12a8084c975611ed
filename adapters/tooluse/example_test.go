package tooluse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ExampleGate_Run runs a model's tool call through an in-process gate: it
// waits for a person, the host resumes it once she approved, and a second
// resume runs nothing. The approver's passkey is stepuptest's fake.
func ExampleGate_Run() {
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	mailer := plug.ExecutorFunc(func(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
		return []byte(`{"sent":true}`), nil
	})
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0), gate.WithExecutor("send_email", mailer))
	if err != nil {
		log.Fatal(err)
	}
	enrollment, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithClock(clock.Now),
		passkey.WithSealKey(stepuptest.SealKey()))
	if err != nil {
		log.Fatal(err)
	}
	dana, err := stepuptest.Enroll(ctx, enrollment, "user:dana")
	if err != nil {
		log.Fatal(err)
	}

	tools := tooluse.New(g, &tooluse.Options{Wait: time.Second})
	scope := tooluse.Scope{ // what the host knows, not what the model says
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
		Session:   "run-9", Task: "t-42",
		Taint: []string{"read web page https://example.org/offer"},
	}
	call := tooluse.Request{ID: "call_1", Name: "send_email", // what the model wrote
		Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`)}

	o := tools.Run(ctx, scope, call)
	fmt.Println(o.State)

	if _, err := stepuptest.Approve(ctx, g.Desk(), dana, o.Ticket.ID); err != nil { // on her own device
		log.Fatal(err)
	}
	o = tools.Resume(ctx, o.Ticket.ID) // the ticket id only: the stored call runs
	fmt.Println(o.State, o.Text())
	fmt.Println(tools.Resume(ctx, o.Ticket.ID).Text())
	// Output:
	// pending
	// ran {"sent":true}
	// Not run again: this approval was already used; the call ran or is running. Do not propose it again.
}

// ExampleGate_Propose has the gate decide a call without running it: the
// host shows the approval link for a pending ticket, or runs it later with
// Resume.
func ExampleGate_Propose() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0))
	if err != nil {
		log.Fatal(err)
	}
	scope := tooluse.Scope{Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
		Session: "run-9", Taint: []string{"read web page https://example.org/offer"}}
	o := tooluse.New(g, nil).Propose(context.Background(), scope, tooluse.Request{ID: "call_1",
		Name: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":40}`)})
	fmt.Println(o.State, o.Ticket.ID != "", o.IsError())
	// Output: pending true false
}

// ExampleWithScope is how a host running a framework agent says whom the
// agent's tool calls act for: wrapped tools read it from their context.
func ExampleWithScope() {
	ctx := tooluse.WithScope(context.Background(), tooluse.Scope{
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Session: "run-9"})
	s, ok := tooluse.ScopeFrom(ctx)
	fmt.Println(s.Principal.User, ok)
	_, ok = tooluse.ScopeFrom(context.Background())
	fmt.Println(ok)
	// Output:
	// user:dana true
	// false
}
