package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentstepup/asu/adapters/tooluse"
)

// ResumeToolResult resumes the deferred call d (see [tooluse.Deferred])
// and returns the tool_result block that answers the model's original
// tool_use block d.CallID, with the outcome. Use it when a call waited
// for a person: keep [tooluse.Outcome.Deferred] instead of sending the
// "waits" block of [ToolResult], hold the turn, and once the person
// decided put this block in the user message that answers the tool_use
// blocks (with [ToolResultMessage]), so the model reads one answer per
// tool_use id. While the outcome is still [tooluse.Pending], keep
// holding: the block is not the answer.
func ResumeToolResult(ctx context.Context, g *tooluse.Gate, d tooluse.Deferred) (sdk.ContentBlockParamUnion, tooluse.Outcome) {
	o := g.ResumeDeferred(ctx, d)
	return sdk.NewToolResultBlock(d.CallID, o.Text(), o.IsError()), o
}

// ToolResultMessage is the user message that answers the tool_use blocks
// of one assistant message, with the blocks answered at once and those
// resumed later, in any order.
func ToolResultMessage(blocks ...sdk.ContentBlockParamUnion) sdk.MessageParam {
	return sdk.NewUserMessage(blocks...)
}
