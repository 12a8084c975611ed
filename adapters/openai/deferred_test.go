package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	gated "github.com/agentstepup/asu/adapters/openai"
	"github.com/agentstepup/asu/adapters/tooluse"
)

// toolMessageCount counts the tool messages of a chat request body that
// answer call id.
func toolMessageCount(t *testing.T, body []byte, id string) int {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	n := 0
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			n++
		}
	}
	return n
}

// TestDeferredChatLoop drives the deferred flow against a fake Chat
// Completions endpoint: the model's call waits for a person, the host
// holds the turn, the person approves, the call runs once, and the next
// request carries one answer to the original call id, the tool's output.
func TestDeferredChatLoop(t *testing.T) {
	w := adaptertest.NewWorld(t)
	model := adaptertest.NewModel(t,
		completion(`[`+fnCall("call_1", "send_email", `{"to":"finance@example.com","subject":"Q3"}`)+`]`),
		`{"id":"chatcmpl-2","object":"chat.completion","created":0,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Sent."}}]}`,
	)
	client := oai.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	params := oai.ChatCompletionNewParams{Model: "gpt-test",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Send the Q3 summary to finance.")}}
	resp, err := client.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	call := resp.Choices[0].Message.ToolCalls[0]

	_, o := gated.ToolMessage(ctx, g, adaptertest.Scope(), call)
	require.Equal(t, tooluse.Pending, o.State)
	d, ok := o.Deferred()
	require.True(t, ok, "the host keeps the deferred call, not the waits message")
	held, still := gated.ResumeToolMessage(ctx, g, d)
	require.Equal(t, tooluse.Pending, still.State, "undecided: keep holding")
	_ = held
	assert.Zero(t, w.Rec.Count())

	_, err = w.Approve(d.Ticket)
	require.NoError(t, err)
	msg, done := gated.ResumeToolMessage(ctx, g, d)
	require.Equal(t, tooluse.Ran, done.State, done.Text())
	assert.Equal(t, "call_1", done.CallID)
	params.Messages = append(params.Messages, resp.Choices[0].Message.ToParam(), msg)
	_, err = client.Chat.Completions.New(ctx, params)
	require.NoError(t, err)

	sent := model.Requests()[1]
	assert.Equal(t, 1, toolMessageCount(t, sent, "call_1"), "one answer per call id")
	assert.Equal(t, `{"sent":true}`, toolMessages(t, sent)["call_1"])
	assert.Equal(t, 1, w.Rec.Count(), "one run")
	assert.JSONEq(t, `{"to":"finance@example.com","subject":"Q3"}`, string(w.Rec.Runs()[0].Args))
}

// TestDeferredResponsesLoop is the deferred flow on the Responses API: one
// function_call_output for the original call id once approved.
func TestDeferredResponsesLoop(t *testing.T) {
	w := adaptertest.NewWorld(t)
	model := adaptertest.NewModel(t,
		`{"id":"resp_1","object":"response","created_at":0,"model":"gpt-test","status":"completed","output":[`+
			`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"send_email","arguments":"{\"to\":\"finance@example.com\",\"subject\":\"Q3\"}","status":"completed"}]}`,
		`{"id":"resp_2","object":"response","created_at":0,"model":"gpt-test","status":"completed","output":[]}`,
	)
	client := oai.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("send it")}})
	require.NoError(t, err)
	_, o := gated.FunctionCallOutput(ctx, g, adaptertest.Scope(), resp.Output[0].AsFunctionCall())
	d, ok := o.Deferred()
	require.True(t, ok)
	_, err = w.Approve(d.Ticket)
	require.NoError(t, err)
	item, done := gated.ResumeFunctionCallOutput(ctx, g, d)
	require.Equal(t, tooluse.Ran, done.State, done.Text())
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", PreviousResponseID: oai.String(resp.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{item}}})
	require.NoError(t, err)
	var req struct {
		Input []struct {
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"input"`
	}
	require.NoError(t, json.Unmarshal(model.Requests()[1], &req))
	require.Len(t, req.Input, 1)
	assert.Equal(t, "call_1", req.Input[0].CallID)
	assert.Equal(t, `{"sent":true}`, req.Input[0].Output)
	assert.Equal(t, 1, w.Rec.Count())
}

// ExampleResumeToolMessage is the deferred flow: a call that waits for a
// person is not answered yet; once she approved on her own device, the
// host resumes it and answers the original call id with what ran, once.
func ExampleResumeToolMessage() {
	ctx := context.Background()
	ex, err := adaptertest.NewExample() // the gate, and the user's passkey on her device
	if err != nil {
		log.Fatal(err)
	}
	defer ex.Close()
	g := tooluse.New(ex.Gate, &tooluse.Options{Wait: 100 * time.Millisecond}) // how long Run holds a call for a person

	var reply oai.ChatCompletionMessage // from client.Chat.Completions.New
	_ = json.Unmarshal([]byte(`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function",
		"function":{"name":"send_email","arguments":"{\"to\":\"finance@example.com\",\"subject\":\"Q3\"}"}}]}`), &reply)
	_, o := gated.ToolMessage(ctx, g, adaptertest.Scope(), reply.ToolCalls[0])
	d, waits := o.Deferred() // keep d (it marshals to JSON); send nothing to the model yet
	fmt.Println("waits:", waits)

	if err := ex.Approve(ctx, d.Ticket); err != nil { // the person, out of band
		log.Fatal(err)
	}
	msg, done := gated.ResumeToolMessage(ctx, g, d)
	b, _ := json.Marshal(msg) // append reply.ToParam(), then msg
	fmt.Println(done.State, ex.Sent.Count())
	fmt.Println(string(b))
	// Output:
	// waits: true
	// ran 1
	// {"content":"{\"sent\":true}","tool_call_id":"call_1","role":"tool"}
}
