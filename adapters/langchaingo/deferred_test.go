package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	lcopenai "github.com/tmc/langchaingo/llms/openai"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	gated "github.com/agentstepup/asu/adapters/langchaingo"
	"github.com/agentstepup/asu/adapters/tooluse"
)

// TestDeferredToolCallLoop drives the deferred flow with LangChainGo's own
// OpenAI client against a fake Chat Completions endpoint: the model's
// tool call waits for a person, the host holds the turn, the person
// approves, the call runs once, and the next request carries one answer
// to the original call id, the tool's output.
func TestDeferredToolCallLoop(t *testing.T) {
	w := adaptertest.NewWorld(t)
	model := adaptertest.NewModel(t,
		`{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",`+
			`"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",`+
			`"function":{"name":"send_email","arguments":"{\"to\":\"finance@example.com\",\"subject\":\"Q3\"}"}}]}}]}`,
		`{"id":"chatcmpl-2","object":"chat.completion","created":0,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Sent."}}]}`,
	)
	llm, err := lcopenai.New(lcopenai.WithBaseURL(model.URL), lcopenai.WithToken("test"), lcopenai.WithModel("gpt-test"))
	require.NoError(t, err)
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Send the Q3 summary to finance.")}
	resp, err := llm.GenerateContent(ctx, history, llms.WithTools([]llms.Tool{{Type: "function",
		Function: &llms.FunctionDefinition{Name: "send_email", Parameters: map[string]any{"type": "object"}}}}))
	require.NoError(t, err)
	require.Len(t, resp.Choices[0].ToolCalls, 1)
	tc := resp.Choices[0].ToolCalls[0]

	_, o := gated.ToolCallResponse(ctx, g, adaptertest.Scope(), tc)
	d, ok := o.Deferred()
	require.True(t, ok, o.Text())
	assert.Zero(t, w.Rec.Count())
	_, err = w.Approve(d.Ticket)
	require.NoError(t, err)
	answer, done := gated.ResumeToolCallResponse(ctx, g, d)
	require.Equal(t, tooluse.Ran, done.State, done.Text())
	assert.Equal(t, "call_1", answer.ToolCallID)

	history = append(history,
		llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}},
		llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{answer}})
	_, err = llm.GenerateContent(ctx, history)
	require.NoError(t, err)

	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			Content    string `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(model.Requests()[1], &req))
	var answers []string
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_1" {
			answers = append(answers, m.Content)
		}
	}
	assert.Equal(t, []string{`{"sent":true}`}, answers, "one answer to the original call id")
	assert.Equal(t, 1, w.Rec.Count(), "one run")
}

// ExampleResumeToolCallResponse is the deferred flow: a tool call that
// waits for a person is not answered yet; once she approved on her own
// device, the host resumes it and answers the original call id, once.
func ExampleResumeToolCallResponse() {
	ctx := context.Background()
	ex, err := adaptertest.NewExample() // the gate, and the user's passkey on her device
	if err != nil {
		log.Fatal(err)
	}
	defer ex.Close()
	g := tooluse.New(ex.Gate, &tooluse.Options{Wait: 100 * time.Millisecond}) // how long Run holds a call for a person

	tc := llms.ToolCall{ID: "call_1", Type: "function", // from resp.Choices[0].ToolCalls
		FunctionCall: &llms.FunctionCall{Name: "send_email", Arguments: `{"to":"finance@example.com","subject":"Q3"}`}}
	_, o := gated.ToolCallResponse(ctx, g, adaptertest.Scope(), tc)
	d, waits := o.Deferred() // keep d; send nothing to the model yet
	fmt.Println("waits:", waits)

	if err := ex.Approve(ctx, d.Ticket); err != nil { // the person, out of band
		log.Fatal(err)
	}
	answer, done := gated.ResumeToolCallResponse(ctx, g, d) // the tool message after the AI message
	fmt.Println(done.State, ex.Sent.Count(), answer.ToolCallID, answer.Content)
	// Output:
	// waits: true
	// ran 1 call_1 {"sent":true}
}
