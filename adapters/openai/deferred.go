package openai

import (
	"context"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentstepup/asu/adapters/tooluse"
)

// ResumeToolMessage resumes the deferred call d (see [tooluse.Deferred])
// and returns the tool message that answers the model's original tool
// call d.CallID, with the outcome. Use it when a call waited for a
// person: keep [tooluse.Outcome.Deferred] instead of sending the
// "waits" text of [ToolMessage], hold the turn, and once the person
// decided append this message after the assistant message that made the
// call, so the model reads one answer per call id. While the outcome is
// still [tooluse.Pending], keep holding: the message is not the answer.
func ResumeToolMessage(ctx context.Context, g *tooluse.Gate, d tooluse.Deferred) (oai.ChatCompletionMessageParamUnion, tooluse.Outcome) {
	o := g.ResumeDeferred(ctx, d)
	return oai.ToolMessage(o.Text(), d.CallID), o
}

// ResumeFunctionCallOutput is [ResumeToolMessage] for the Responses API:
// the function_call_output item for the original call d.CallID.
func ResumeFunctionCallOutput(ctx context.Context, g *tooluse.Gate, d tooluse.Deferred) (responses.ResponseInputItemUnionParam, tooluse.Outcome) {
	o := g.ResumeDeferred(ctx, d)
	item := responses.ResponseInputItemParamOfFunctionCallOutput(o.Text())
	item.OfFunctionCallOutput.CallID = param.NewOpt(d.CallID)
	return item, o
}
