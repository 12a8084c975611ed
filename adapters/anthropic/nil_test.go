package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gated "github.com/agentstepup/asu/adapters/anthropic"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
)

// TestNilInputsAnswerWithoutPanic calls every exported function with
// each combination of a nil or working context, gate and message (and
// zero blocks and deferred calls): nothing panics, a nil message has no
// tool_use block, and a call through a nil gate is answered as an error.
func TestNilInputsAnswerWithoutPanic(t *testing.T) {
	w := adaptertest.NewWorld(t)
	var m sdk.Message
	require.NoError(t, json.Unmarshal([]byte(message("msg_1", `[`+toolUse("t1", "write_draft", `{"to":"a@example.com"}`)+`]`)), &m))
	var noCtx context.Context
	for mask := range 1 << 3 {
		ctx, g, msg := context.Background(), tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait}), &m
		if mask&1 != 0 {
			ctx = noCtx
		}
		if mask&2 != 0 {
			g = nil
		}
		if mask&4 != 0 {
			msg = nil
		}
		name := fmt.Sprintf("nil ctx %v, nil gate %v, nil message %v", mask&1 != 0, mask&2 != 0, mask&4 != 0)
		assert.NotPanics(t, func() {
			_, outs, ok := gated.ToolResults(ctx, g, adaptertest.Scope(), msg)
			assert.Equal(t, msg != nil, ok, name)
			for _, o := range outs {
				assert.Equal(t, g == nil, o.IsError(), name)
			}
			for _, b := range []sdk.ToolUseBlock{{}, m.Content[0].AsToolUse()} {
				_, o := gated.ToolResult(ctx, g, adaptertest.Scope(), b)
				assert.NotEmpty(t, o.Text(), name)
			}
			for _, d := range []tooluse.Deferred{{}, {CallID: "t1", Tool: "send_email", Ticket: "nope"}} {
				_, o := gated.ResumeToolResult(ctx, g, d)
				assert.True(t, o.IsError(), name)
			}
			_ = gated.ToolResultMessage()
			_ = gated.ToolResultMessage(sdk.ContentBlockParamUnion{})
		}, name)
	}
}
