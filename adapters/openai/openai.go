// Package openai gates the tool calls of OpenAI models
// (github.com/openai/openai-go/v3): each helper takes the SDK's tool call,
// runs it through asu's gate with [tooluse.Gate.Run], and returns the
// SDK's tool-result item for the next request, with the outcome.
//
// Chat Completions answer a ChatCompletionMessageToolCallUnion with a tool
// message ([ToolMessage], [ToolMessages]); the Responses API answers a
// ResponseFunctionToolCall with a function_call_output item
// ([FunctionCallOutput]). Every tool call gets exactly one answer, as the
// API requires. A call that waits for a person is answered with a text
// that says so; a host that holds the turn instead keeps
// [tooluse.Outcome.Deferred] and, once the person decided, answers the
// original call id with [ResumeToolMessage] or [ResumeFunctionCallOutput]
// (the deferred flow, see [tooluse.Deferred]). Only function tool calls
// carry JSON arguments the gate can bind to; a custom tool call is
// refused.
package openai

import (
	"context"
	"encoding/json"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/stepup"
)

// ToolMessage runs the model's tool call tc through g in scope s and
// returns the tool message that answers it.
func ToolMessage(ctx context.Context, g *tooluse.Gate, s tooluse.Scope, tc oai.ChatCompletionMessageToolCallUnion) (oai.ChatCompletionMessageParamUnion, tooluse.Outcome) {
	var o tooluse.Outcome
	if tc.Type != "" && tc.Type != "function" {
		o = refuse(tc.ID, tc.Custom.Name, "only function tool calls are gated; a "+tc.Type+" tool call is not run")
	} else {
		o = g.Run(ctx, s, tooluse.Request{ID: tc.ID, Name: tc.Function.Name, Args: json.RawMessage(tc.Function.Arguments)})
	}
	return oai.ToolMessage(o.Text(), tc.ID), o
}

// ToolMessages answers every tool call of the assistant message m, in
// order. Append m.ToParam() and then these to the conversation.
func ToolMessages(ctx context.Context, g *tooluse.Gate, s tooluse.Scope, m oai.ChatCompletionMessage) ([]oai.ChatCompletionMessageParamUnion, []tooluse.Outcome) {
	msgs := make([]oai.ChatCompletionMessageParamUnion, 0, len(m.ToolCalls))
	outs := make([]tooluse.Outcome, 0, len(m.ToolCalls))
	for _, tc := range m.ToolCalls {
		msg, o := ToolMessage(ctx, g, s, tc)
		msgs, outs = append(msgs, msg), append(outs, o)
	}
	return msgs, outs
}

// FunctionCallOutput runs the Responses API's function call fc through g
// in scope s and returns the function_call_output item that answers it.
func FunctionCallOutput(ctx context.Context, g *tooluse.Gate, s tooluse.Scope, fc responses.ResponseFunctionToolCall) (responses.ResponseInputItemUnionParam, tooluse.Outcome) {
	o := g.Run(ctx, s, tooluse.Request{ID: fc.CallID, Name: fc.Name, Args: json.RawMessage(fc.Arguments)})
	item := responses.ResponseInputItemParamOfFunctionCallOutput(o.Text())
	item.OfFunctionCallOutput.CallID = param.NewOpt(fc.CallID)
	return item, o
}

func refuse(id, name, reason string) tooluse.Outcome {
	return tooluse.Outcome{CallID: id, Tool: name, State: tooluse.Denied,
		Ticket: stepup.Ticket{Status: stepup.StatusDenied, Reason: reason}}
}
