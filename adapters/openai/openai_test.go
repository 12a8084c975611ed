package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	gated "github.com/agentstepup/asu/adapters/openai"
	"github.com/agentstepup/asu/adapters/tooluse"
)

func completion(toolCalls string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"gpt-test","choices":[{"index":0,` +
		`"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":` + toolCalls + `}}]}`
}

func fnCall(id, name, args string) string {
	a, _ := json.Marshal(args)
	return `{"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":` + string(a) + `}}`
}

// toolMessages returns the tool messages of a chat request body, by call id.
func toolMessages(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			Content    string `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	out := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// TestChatLoop drives a Chat Completions tool loop against a fake model
// endpoint: a call that waits for a person and one the policy denies; the
// person approves; the model then asks for the same e-mail to another
// recipient, which waits for a person of its own; resuming the approved
// ticket sends the e-mail as approved, once.
func TestChatLoop(t *testing.T) {
	w := adaptertest.NewWorld(t)
	model := adaptertest.NewModel(t,
		completion(`[`+fnCall("call_1", "send_email", `{"to":"finance@example.com","subject":"Q3"}`)+`,`+
			fnCall("call_2", "wire_money", `{"iban":"XX00"}`)+`]`),
		completion(`[`+fnCall("call_3", "send_email", `{"to":"attacker@evil.example","subject":"Q3"}`)+`]`),
		`{"id":"chatcmpl-3","object":"chat.completion","created":0,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Done."}}]}`,
	)
	client := oai.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	params := oai.ChatCompletionNewParams{Model: "gpt-test",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Send the Q3 summary to finance.")}}

	resp, err := client.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	msgs, outs := gated.ToolMessages(ctx, g, adaptertest.Scope(), resp.Choices[0].Message)
	require.Len(t, outs, 2)
	assert.Equal(t, tooluse.Pending, outs[0].State)
	assert.Equal(t, tooluse.Denied, outs[1].State)
	assert.Zero(t, w.Rec.Count())
	params.Messages = append(params.Messages, resp.Choices[0].Message.ToParam())
	params.Messages = append(params.Messages, msgs...)

	_, err = w.Approve(outs[0].Ticket.ID) // on the approver's own device
	require.NoError(t, err)

	resp, err = client.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	sent := toolMessages(t, model.Requests()[1])
	assert.Contains(t, sent["call_1"], "waits for a person's approval")
	assert.Contains(t, sent["call_2"], "Not run: denied")

	msgs, outs2 := gated.ToolMessages(ctx, g, adaptertest.Scope(), resp.Choices[0].Message)
	require.Len(t, outs2, 1)
	assert.Equal(t, tooluse.Pending, outs2[0].State, "new arguments are a new call for a person")
	assert.NotEqual(t, outs[0].Ticket.ID, outs2[0].Ticket.ID)
	params.Messages = append(params.Messages, resp.Choices[0].Message.ToParam())
	params.Messages = append(params.Messages, msgs...)
	_, err = client.Chat.Completions.New(ctx, params)
	require.NoError(t, err)

	ran := g.Resume(ctx, outs[0].Ticket.ID)
	require.Equal(t, tooluse.Ran, ran.State, ran.Text())
	assert.Equal(t, tooluse.Pending, g.Resume(ctx, outs2[0].Ticket.ID).State)
	require.Equal(t, 1, w.Rec.Count())
	assert.JSONEq(t, `{"to":"finance@example.com","subject":"Q3"}`, string(w.Rec.Runs()[0].Args))
	assert.Equal(t, tooluse.Spent, g.Resume(ctx, outs[0].Ticket.ID).State)
}

func TestCustomToolCallIsRefused(t *testing.T) {
	w := adaptertest.NewWorld(t)
	var m oai.ChatCompletionMessage
	require.NoError(t, json.Unmarshal([]byte(`{"role":"assistant","tool_calls":[`+
		`{"id":"call_9","type":"custom","custom":{"name":"write_draft","input":"to a@example.com"}}]}`), &m))
	msgs, outs := gated.ToolMessages(context.Background(), tooluse.New(w.Gate, nil), adaptertest.Scope(), m)
	require.Len(t, msgs, 1)
	assert.Equal(t, tooluse.Denied, outs[0].State)
	assert.Contains(t, outs[0].Text(), "only function tool calls")
	assert.Zero(t, w.Rec.Count())
	b, err := json.Marshal(msgs[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"tool_call_id":"call_9"`)
}

// TestResponsesLoop answers a Responses API function call with its
// function_call_output item, sent back on the next request.
func TestResponsesLoop(t *testing.T) {
	w := adaptertest.NewWorld(t)
	model := adaptertest.NewModel(t,
		`{"id":"resp_1","object":"response","created_at":0,"model":"gpt-test","status":"completed","output":[`+
			`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"write_draft","arguments":"{\"to\":\"a@example.com\"}","status":"completed"},`+
			`{"type":"function_call","id":"fc_2","call_id":"call_2","name":"issue_refund","arguments":"{\"order\":\"A-17\",\"amount\":9000}","status":"completed"}]}`,
		`{"id":"resp_2","object":"response","created_at":0,"model":"gpt-test","status":"completed","output":[]}`,
	)
	client := oai.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("draft it")}})
	require.NoError(t, err)
	var items responses.ResponseInputParam
	var states []tooluse.State
	for _, it := range resp.Output {
		if it.Type != "function_call" {
			continue
		}
		item, o := gated.FunctionCallOutput(ctx, g, adaptertest.Scope(), it.AsFunctionCall())
		items, states = append(items, item), append(states, o.State)
	}
	assert.Equal(t, []tooluse.State{tooluse.Ran, tooluse.Denied}, states)
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", PreviousResponseID: oai.String(resp.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items}})
	require.NoError(t, err)

	var req struct {
		Input []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"input"`
	}
	require.NoError(t, json.Unmarshal(model.Requests()[1], &req))
	require.Len(t, req.Input, 2)
	assert.Equal(t, "function_call_output", req.Input[0].Type)
	assert.Equal(t, "call_1", req.Input[0].CallID)
	assert.Equal(t, `{"sent":true}`, req.Input[0].Output)
	assert.Equal(t, "call_2", req.Input[1].CallID)
	assert.True(t, strings.HasPrefix(req.Input[1].Output, "Not run: denied"), req.Input[1].Output)
	assert.Equal(t, 1, w.Rec.Count())
}
