package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	gated "github.com/agentstepup/asu/adapters/anthropic"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ExampleToolResults answers the tool_use blocks of a model's message: a
// draft the policy allows runs, a refund over the limit is denied and
// flagged as an error. The message would come from client.Messages.New;
// here it is decoded from the JSON the API sends.
func ExampleToolResults() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	drafts := plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
		return []byte(`{"draft":"d-1"}`), nil
	})
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0), gate.WithExecutor("write_draft", drafts))
	if err != nil {
		log.Fatal(err)
	}

	var m sdk.Message
	_ = json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","content":[
		{"type":"tool_use","id":"toolu_1","name":"write_draft","input":{"to":"finance@example.com"}},
		{"type":"tool_use","id":"toolu_2","name":"issue_refund","input":{"order":"A-17","amount":9000}}]}`), &m)

	scope := tooluse.Scope{Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Session: "run-9"}
	reply, outcomes, _ := gated.ToolResults(context.Background(), tooluse.New(g, nil), scope, &m)
	for _, o := range outcomes {
		fmt.Println(o.CallID, o.State, o.IsError())
	}
	fmt.Println(len(reply.OfUser.Content), "tool_result blocks") // append m.ToParam(), then reply
	// Output:
	// toolu_1 ran false
	// toolu_2 denied true
	// 2 tool_result blocks
}
