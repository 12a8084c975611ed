package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	gated "github.com/agentstepup/asu/adapters/openai"
	"github.com/agentstepup/asu/adapters/tooluse"
)

// TestNilInputsAnswerWithoutPanic calls every exported function with
// each combination of a nil or working context and gate, and with zero
// and real tool calls, messages and deferred calls: nothing panics, every
// call gets an answer, and through a nil gate none runs.
func TestNilInputsAnswerWithoutPanic(t *testing.T) {
	w := adaptertest.NewWorld(t)
	var m oai.ChatCompletionMessage
	require.NoError(t, json.Unmarshal([]byte(`{"role":"assistant","tool_calls":[`+
		fnCall("call_1", "write_draft", `{"to":"a@example.com"}`)+`]}`), &m))
	var fc responses.ResponseFunctionToolCall
	require.NoError(t, json.Unmarshal([]byte(`{"type":"function_call","call_id":"f1","name":"write_draft","arguments":"{}"}`), &fc))
	var noCtx context.Context
	for mask := range 1 << 2 {
		ctx, g := context.Background(), tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
		if mask&1 != 0 {
			ctx = noCtx
		}
		if mask&2 != 0 {
			g = nil
		}
		name := fmt.Sprintf("nil ctx %v, nil gate %v", mask&1 != 0, mask&2 != 0)
		before := w.Rec.Count()
		assert.NotPanics(t, func() {
			for _, msg := range []oai.ChatCompletionMessage{{}, m} {
				msgs, outs := gated.ToolMessages(ctx, g, adaptertest.Scope(), msg)
				assert.Len(t, msgs, len(msg.ToolCalls), name)
				assert.Len(t, outs, len(msg.ToolCalls), name)
			}
			_, o := gated.ToolMessage(ctx, g, adaptertest.Scope(), oai.ChatCompletionMessageToolCallUnion{})
			assert.NotEqual(t, tooluse.Ran, o.State, name)
			for _, f := range []responses.ResponseFunctionToolCall{{}, fc} {
				_, o := gated.FunctionCallOutput(ctx, g, adaptertest.Scope(), f)
				assert.NotEmpty(t, o.Text(), name)
			}
			for _, d := range []tooluse.Deferred{{}, {CallID: "call_1", Tool: "send_email", Ticket: "nope"}} {
				_, o := gated.ResumeToolMessage(ctx, g, d)
				assert.NotEqual(t, tooluse.Ran, o.State, name)
				_, o = gated.ResumeFunctionCallOutput(ctx, g, d)
				assert.NotEqual(t, tooluse.Ran, o.State, name)
			}
		}, name)
		if g == nil {
			assert.Equal(t, before, w.Rec.Count(), "%s: nothing ran", name)
		}
	}
}
