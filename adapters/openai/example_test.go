package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	gated "github.com/agentstepup/asu/adapters/openai"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ExampleToolMessages answers the tool calls of a chat completion: a draft
// the policy allows runs, an unknown tool is denied. The reply would come
// from client.Chat.Completions.New; here it is decoded from the JSON the
// API sends.
func ExampleToolMessages() {
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

	var reply oai.ChatCompletionMessage
	_ = json.Unmarshal([]byte(`{"role":"assistant","tool_calls":[
		{"id":"call_1","type":"function","function":{"name":"write_draft","arguments":"{\"to\":\"finance@example.com\"}"}},
		{"id":"call_2","type":"function","function":{"name":"wire_money","arguments":"{\"iban\":\"XX00\"}"}}]}`), &reply)

	scope := tooluse.Scope{Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Session: "run-9"}
	msgs, outcomes := gated.ToolMessages(context.Background(), tooluse.New(g, nil), scope, reply)
	for i, o := range outcomes {
		fmt.Println(o.CallID, o.State, o.Text())
		_ = msgs[i] // append reply.ToParam(), then msgs, to the next request's messages
	}
	// Output:
	// call_1 ran {"draft":"d-1"}
	// call_2 denied Not run: denied: unknown tool.
}

// ExampleFunctionCallOutput answers a Responses API function call with
// the function_call_output item for the next request's input.
func ExampleFunctionCallOutput() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0))
	if err != nil {
		log.Fatal(err)
	}
	var fc responses.ResponseFunctionToolCall // resp.Output[i].AsFunctionCall()
	_ = json.Unmarshal([]byte(`{"type":"function_call","call_id":"call_1","name":"wire_money","arguments":"{}"}`), &fc)
	scope := tooluse.Scope{Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Session: "run-9"}
	item, o := gated.FunctionCallOutput(context.Background(), tooluse.New(g, nil), scope, fc)
	b, _ := json.Marshal(item)
	fmt.Println(o.State)
	fmt.Println(string(b))
	// Output:
	// denied
	// {"output":"Not run: denied: unknown tool.","call_id":"call_1","type":"function_call_output"}
}
