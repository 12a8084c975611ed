package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	gated "github.com/agentstepup/asu/adapters/langchaingo"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ExampleWrap gates LangChainGo's calculator: the gate runs the real tool
// through Executor, the agent gets the wrapped one, and the host puts the
// run's scope in the context it runs the agent with.
func ExampleWrap() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	cat, err := policy.NewCatalog("lc-1", policy.Tool{Name: "calculator", Title: "Calculate", Class: card.ClassRead,
		Schema: json.RawMessage(`{"type":"object","required":["input"],"properties":{"input":{"type":"string"}}}`)})
	if err != nil {
		log.Fatal(err)
	}
	g, err := gate.New(st, cat, stepuptest.Passkeys(st), gate.WithDwell(0), gate.WithExecutor("calculator", gated.Executor{Tool: tools.Calculator{}}))
	if err != nil {
		log.Fatal(err)
	}

	calc := gated.Wrap(tooluse.New(g, nil), tools.Calculator{}) // give this to agents.NewOneShotAgent
	ctx := tooluse.WithScope(context.Background(), tooluse.Scope{
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Session: "run-9"})
	out, _ := calc.Call(ctx, "6*7")
	fmt.Println(calc.Name(), out)
	out, _ = calc.Call(context.Background(), "6*7") // no scope: refused
	fmt.Println(out)
	// Output:
	// calculator 42
	// Not run: denied: the host gave this call no scope (user, session).
}

// ExampleToolCallResponse answers a model's function call, made through
// LangChainGo's llms API, with the response for the next request.
func ExampleToolCallResponse() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0))
	if err != nil {
		log.Fatal(err)
	}
	scope := tooluse.Scope{Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Session: "run-9",
		Taint: []string{"read web page https://example.org/offer"}}
	tc := llms.ToolCall{ID: "call_1", Type: "function", // from resp.Choices[0].ToolCalls
		FunctionCall: &llms.FunctionCall{Name: "send_email", Arguments: `{"to":"finance@example.com"}`}}
	resp, o := gated.ToolCallResponse(context.Background(), tooluse.New(g, &tooluse.Options{Wait: time.Millisecond}), scope, tc)
	fmt.Println(resp.ToolCallID, resp.Name, o.State)
	// Output: call_1 send_email pending
}
