package langchaingo

import (
	"context"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentstepup/asu/adapters/tooluse"
)

// ResumeToolCallResponse resumes the deferred call d (see
// [tooluse.Deferred]) and returns the response that answers the model's
// original tool call d.CallID, with the outcome. Use it when a call
// waited for a person: keep [tooluse.Outcome.Deferred] instead of
// sending the "waits" response of [ToolCallResponse], hold the turn, and
// once the person decided add this response (llms.ChatMessageTypeTool)
// after the AI message that made the call, so the model reads one answer
// per call id. While the outcome is still [tooluse.Pending], keep
// holding: the response is not the answer.
func ResumeToolCallResponse(ctx context.Context, g *tooluse.Gate, d tooluse.Deferred) (llms.ToolCallResponse, tooluse.Outcome) {
	o := g.ResumeDeferred(ctx, d)
	return llms.ToolCallResponse{ToolCallID: d.CallID, Name: d.Tool, Content: o.Text()}, o
}
