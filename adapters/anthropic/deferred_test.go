package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gated "github.com/agentstepup/asu/adapters/anthropic"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
)

// resultCount counts the tool_result blocks of a request body's last
// message that answer tool_use id.
func resultCount(t *testing.T, body []byte, id string) int {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	n := 0
	for _, c := range req.Messages[len(req.Messages)-1].Content {
		if c.Type == "tool_result" && c.ToolUseID == id {
			n++
		}
	}
	return n
}

// TestDeferredMessagesLoop drives the deferred flow against a fake
// Messages endpoint: of two tool_use blocks, one is denied at once and
// one waits for a person; the host holds the turn, the person approves,
// the call runs once, and the next request answers each tool_use id
// exactly once, the approved one with the tool's output.
func TestDeferredMessagesLoop(t *testing.T) {
	w := adaptertest.NewWorld(t)
	model := adaptertest.NewModel(t,
		message("msg_1", `[`+toolUse("toolu_1", "send_email", `{"to":"finance@example.com","subject":"Q3"}`)+`,`+
			toolUse("toolu_2", "issue_refund", `{"order":"A-17","amount":9000}`)+`]`),
		`{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
	)
	client := sdk.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	params := sdk.MessageNewParams{Model: "claude-test", MaxTokens: 256,
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Send the Q3 summary to finance."))}}
	m, err := client.Messages.New(ctx, params)
	require.NoError(t, err)

	var answered []sdk.ContentBlockParamUnion
	var deferred []tooluse.Deferred
	for _, c := range m.Content {
		if c.Type != "tool_use" {
			continue
		}
		b, o := gated.ToolResult(ctx, g, adaptertest.Scope(), c.AsToolUse())
		if d, ok := o.Deferred(); ok {
			deferred = append(deferred, d)
			continue
		}
		answered = append(answered, b)
	}
	require.Len(t, deferred, 1)
	require.Len(t, answered, 1)
	assert.Equal(t, "toolu_1", deferred[0].CallID)
	assert.Zero(t, w.Rec.Count())

	_, err = w.Approve(deferred[0].Ticket)
	require.NoError(t, err)
	b, done := gated.ResumeToolResult(ctx, g, deferred[0])
	require.Equal(t, tooluse.Ran, done.State, done.Text())
	params.Messages = append(params.Messages, m.ToParam(), gated.ToolResultMessage(append(answered, b)...))
	_, err = client.Messages.New(ctx, params)
	require.NoError(t, err)

	body := model.Requests()[1]
	for _, id := range []string{"toolu_1", "toolu_2"} {
		assert.Equal(t, 1, resultCount(t, body, id), "one answer for %s", id)
	}
	sent := results(t, body)
	assert.Equal(t, `{"sent":true}`, sent["toolu_1"].Text)
	assert.False(t, sent["toolu_1"].IsError)
	assert.True(t, sent["toolu_2"].IsError)
	assert.Equal(t, 1, w.Rec.Count(), "one run")
}

// ExampleResumeToolResult is the deferred flow: a tool_use that waits
// for a person is not answered yet; once she approved on her own device,
// the host resumes it and answers the original tool_use id, once.
func ExampleResumeToolResult() {
	ctx := context.Background()
	ex, err := adaptertest.NewExample() // the gate, and the user's passkey on her device
	if err != nil {
		log.Fatal(err)
	}
	defer ex.Close()
	g := tooluse.New(ex.Gate, &tooluse.Options{Wait: 100 * time.Millisecond}) // how long Run holds a call for a person

	var b sdk.ToolUseBlock // from the model's message: m.Content[i].AsToolUse()
	_ = json.Unmarshal([]byte(`{"type":"tool_use","id":"toolu_1","name":"send_email",
		"input":{"to":"finance@example.com","subject":"Q3"}}`), &b)
	_, o := gated.ToolResult(ctx, g, adaptertest.Scope(), b)
	d, waits := o.Deferred() // keep d; send nothing to the model yet
	fmt.Println("waits:", waits)

	if err := ex.Approve(ctx, d.Ticket); err != nil { // the person, out of band
		log.Fatal(err)
	}
	block, done := gated.ResumeToolResult(ctx, g, d)
	reply := gated.ToolResultMessage(block) // append m.ToParam(), then reply
	fmt.Println(done.State, ex.Sent.Count(), len(reply.OfUser.Content), *block.GetToolUseID())
	// Output:
	// waits: true
	// ran 1 1 toolu_1
}
