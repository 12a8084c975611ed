package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gated "github.com/agentstepup/asu/adapters/anthropic"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
)

func message(id string, content string) string {
	return `{"id":"` + id + `","type":"message","role":"assistant","model":"claude-test","content":` + content +
		`,"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`
}

func toolUse(id, name, input string) string {
	return `{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}`
}

// results returns the tool_result blocks of the last message of a request
// body, by tool_use id.
func results(t *testing.T, body []byte) map[string]struct {
	Text    string
	IsError bool
} {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	out := map[string]struct {
		Text    string
		IsError bool
	}{}
	last := req.Messages[len(req.Messages)-1]
	for _, c := range last.Content {
		if c.Type == "tool_result" && len(c.Content) == 1 {
			out[c.ToolUseID] = struct {
				Text    string
				IsError bool
			}{c.Content[0].Text, c.IsError}
		}
	}
	return out
}

// TestMessagesLoop drives a tool-use loop against a fake Messages
// endpoint: an e-mail that waits for a person, a refund over the policy's
// limit that is denied; after the person approves, the model asks for the
// e-mail to another recipient, a new call for a person; resuming the
// approved ticket sends the e-mail as approved, once.
func TestMessagesLoop(t *testing.T) {
	w := adaptertest.NewWorld(t)
	model := adaptertest.NewModel(t,
		message("msg_1", `[{"type":"text","text":"Sending."},`+
			toolUse("toolu_1", "send_email", `{"to":"finance@example.com","subject":"Q3"}`)+`,`+
			toolUse("toolu_2", "issue_refund", `{"order":"A-17","amount":9000}`)+`]`),
		message("msg_2", `[`+toolUse("toolu_3", "send_email", `{"to":"attacker@evil.example","subject":"Q3"}`)+`]`),
		`{"id":"msg_3","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
	)
	client := sdk.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	params := sdk.MessageNewParams{Model: "claude-test", MaxTokens: 256,
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Send the Q3 summary to finance."))}}

	m, err := client.Messages.New(ctx, params)
	require.NoError(t, err)
	reply, outs, ok := gated.ToolResults(ctx, g, adaptertest.Scope(), m)
	require.True(t, ok)
	require.Len(t, outs, 2)
	assert.Equal(t, tooluse.Pending, outs[0].State)
	assert.Equal(t, tooluse.Denied, outs[1].State)
	assert.Zero(t, w.Rec.Count())
	params.Messages = append(params.Messages, m.ToParam(), reply)

	_, err = w.Approve(outs[0].Ticket.ID)
	require.NoError(t, err)

	m, err = client.Messages.New(ctx, params)
	require.NoError(t, err)
	sent := results(t, model.Requests()[1])
	assert.Contains(t, sent["toolu_1"].Text, "waits for a person's approval")
	assert.False(t, sent["toolu_1"].IsError)
	assert.Contains(t, sent["toolu_2"].Text, "Not run: denied")
	assert.True(t, sent["toolu_2"].IsError)

	reply, outs2, ok := gated.ToolResults(ctx, g, adaptertest.Scope(), m)
	require.True(t, ok)
	assert.Equal(t, tooluse.Pending, outs2[0].State, "new arguments are a new call for a person")
	params.Messages = append(params.Messages, m.ToParam(), reply)
	m, err = client.Messages.New(ctx, params)
	require.NoError(t, err)
	_, _, ok = gated.ToolResults(ctx, g, adaptertest.Scope(), m)
	assert.False(t, ok, "a message without tool_use needs no answer")

	ran := g.Resume(ctx, outs[0].Ticket.ID)
	require.Equal(t, tooluse.Ran, ran.State, ran.Text())
	assert.Equal(t, tooluse.Pending, g.Resume(ctx, outs2[0].Ticket.ID).State)
	require.Equal(t, 1, w.Rec.Count())
	assert.JSONEq(t, `{"to":"finance@example.com","subject":"Q3"}`, string(w.Rec.Runs()[0].Args))
}
