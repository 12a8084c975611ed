// Package anthropic gates the tool calls of Claude models
// (github.com/anthropics/anthropic-sdk-go/v2): each helper takes the SDK's
// tool_use block, runs it through asu's gate with [tooluse.Gate.Run], and
// returns the tool_result block that answers it, with the outcome.
//
// A call that did not run is answered with is_error set
// ([tooluse.Outcome.IsError]); a call that waits for a person is answered
// with a text that says so, not as an error; a host that holds the turn
// instead keeps [tooluse.Outcome.Deferred] and, once the person decided,
// answers the original tool_use id with [ResumeToolResult] (the deferred
// flow, see [tooluse.Deferred]).
package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentstepup/asu/adapters/tooluse"
)

// ToolResult runs the model's tool_use block b through g in scope s and
// returns the tool_result block that answers it.
func ToolResult(ctx context.Context, g *tooluse.Gate, s tooluse.Scope, b sdk.ToolUseBlock) (sdk.ContentBlockParamUnion, tooluse.Outcome) {
	o := g.Run(ctx, s, tooluse.Request{ID: b.ID, Name: b.Name, Args: b.Input})
	return sdk.NewToolResultBlock(b.ID, o.Text(), o.IsError()), o
}

// ToolResults answers every tool_use block of the model's message m, in
// order, as the user message that follows it. Append m.ToParam() and then
// the returned message to the conversation. ok is false when m is nil
// or has no tool_use block (the message is then empty).
func ToolResults(ctx context.Context, g *tooluse.Gate, s tooluse.Scope, m *sdk.Message) (reply sdk.MessageParam, outcomes []tooluse.Outcome, ok bool) {
	if m == nil {
		return sdk.MessageParam{}, nil, false
	}
	var blocks []sdk.ContentBlockParamUnion
	for _, c := range m.Content {
		if c.Type != "tool_use" {
			continue
		}
		b, o := ToolResult(ctx, g, s, c.AsToolUse())
		blocks, outcomes = append(blocks, b), append(outcomes, o)
	}
	if len(blocks) == 0 {
		return sdk.MessageParam{}, nil, false
	}
	return sdk.NewUserMessage(blocks...), outcomes, true
}
