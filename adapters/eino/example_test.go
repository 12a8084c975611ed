package eino_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	einoadapter "github.com/agentstepup/asu/adapters/eino"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

type emailArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

// ExampleWrap gates an Eino tool: the gate runs the real tool through
// Executor, the graph sees the wrapped one. The call interrupts the graph
// until the approver (stepuptest's fake passkey) approves; the host then
// resumes the interrupt, and the stored call runs.
func ExampleWrap() {
	ctx := context.Background()
	send, err := utils.InferTool("send_email", "Send an e-mail.", func(ctx context.Context, a emailArgs) (string, error) {
		key, _ := tooluse.IdempotencyKey(ctx) // send at most once per key
		return "sent to " + a.To + " (" + fmt.Sprint(key != "") + ")", nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// The gate, in its own process in production: the real tool runs here.
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0),
		gate.WithExecutor("send_email", einoadapter.Executor{Tool: send}))
	if err != nil {
		log.Fatal(err)
	}
	enrollment, _ := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithClock(clock.Now),
		passkey.WithSealKey(stepuptest.SealKey()))
	dana, err := stepuptest.Enroll(ctx, enrollment, "user:dana")
	if err != nil {
		log.Fatal(err)
	}

	// The agent: a ToolsNode of wrapped tools, checkpointed.
	gated := einoadapter.Wrap(tooluse.New(g, &tooluse.Options{Wait: time.Second}), send)
	tn, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: []tool.BaseTool{gated}})
	if err != nil {
		log.Fatal(err)
	}
	graph := compose.NewGraph[*schema.Message, []*schema.Message]()
	_ = graph.AddToolsNode("tools", tn)
	_ = graph.AddEdge(compose.START, "tools")
	_ = graph.AddEdge("tools", compose.END)
	run, err := graph.Compile(ctx, compose.WithCheckPointStore(&memoryCheckpoints{}))
	if err != nil {
		log.Fatal(err)
	}

	ctx = tooluse.WithScope(ctx, tooluse.Scope{
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
		Session:   "run-9", Task: "t-42", Taint: []string{"read web page https://example.org/offer"},
	})
	call := schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function",
		Function: schema.FunctionCall{Name: "send_email", Arguments: `{"to":"finance@example.com","subject":"Q3"}`}}})
	_, err = run.Invoke(ctx, call, compose.WithCheckPointID("run-9"))
	waiting := einoadapter.Pending(err) // the interrupt's info: show the approval link
	if len(waiting) != 1 {
		log.Fatalf("not interrupted: %v", err)
	}
	fmt.Println("interrupted:", waiting[0].Tool, "waits for approval")

	if _, err := stepuptest.Approve(ctx, g.Desk(), dana, waiting[0].Ticket); err != nil {
		log.Fatal(err)
	}
	id, _ := einoadapter.InterruptID(err, waiting[0].Ticket)
	out, err := run.Invoke(compose.Resume(ctx, id), nil, compose.WithCheckPointID("run-9"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tool result:", out[0].Content)
	// Output:
	// interrupted: send_email waits for approval
	// tool result: sent to finance@example.com (true)
}
