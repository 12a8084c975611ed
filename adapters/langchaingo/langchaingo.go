// Package langchaingo puts asu's gate in front of LangChainGo tools
// (github.com/tmc/langchaingo). [Wrap] gives the agent a tools.Tool whose
// every call is proposed to the gate; [Executor] runs the real tool inside
// the gate once a call may run. [ToolCallResponse] answers a model's
// function call (llms.ToolCall) the same way.
//
// A LangChainGo tool takes one string. The gated call's arguments are the
// object {"input": <that string>}, so the catalog entry of a wrapped tool
// has one string argument named input, and the approver's card shows the
// input verbatim. LangChainGo has no interrupt: a call still waiting for
// a person when the gate's wait ends returns a text that says so, as the
// tool's observation. For a model's function calls, a host that holds the
// turn keeps [tooluse.Outcome.Deferred] of [ToolCallResponse] and answers
// the original call id with [ResumeToolCallResponse] once the person
// decided (the deferred flow, see [tooluse.Deferred]); a retry of the
// same call joins its ticket.
package langchaingo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentstepup/asu/adapters/internal/foldnames"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Wrap returns t behind the gate g: the same name and description, but
// Call proposes {"input": input} with the [tooluse.Scope] its context
// carries (see tooluse.WithScope), waits as g's options say, and executes
// the call by ticket id. The agent side never calls t: register
// [Executor] for t with the gate. A context without a scope is refused.
// The error is always nil: a denial or failure is an observation for the
// model. A nil t has no name, and its every call is refused.
func Wrap(g *tooluse.Gate, t tools.Tool) tools.Tool { return &gated{g: g, t: t} }

type gated struct {
	g *tooluse.Gate
	t tools.Tool
}

func (w *gated) Name() string {
	if w.t == nil {
		return ""
	}
	return w.t.Name()
}

func (w *gated) Description() string {
	if w.t == nil {
		return ""
	}
	return w.t.Description()
}

func (w *gated) Call(ctx context.Context, input string) (string, error) {
	args, err := json.Marshal(struct {
		Input string `json:"input"`
	}{input})
	if err != nil {
		return "", fmt.Errorf("langchaingo: %w", err)
	}
	r := tooluse.Request{ID: step(), Name: w.Name(), Args: args}
	if w.t == nil {
		return refuse(r.ID, "", "the host wrapped no tool").Text(), nil
	}
	s, ok := tooluse.ScopeFrom(ctx)
	if !ok {
		return tooluse.Unscoped(r).Text(), nil
	}
	return w.g.Run(ctx, s, r).Text(), nil
}

// step names a call LangChainGo gives no id.
func step() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "lc-" + hex.EncodeToString(b[:])
}

// ToolCallResponse runs the model's function call tc through g in scope s
// and returns the response that answers it, with the outcome. Its
// arguments are the model's JSON, as for any tool-use API.
func ToolCallResponse(ctx context.Context, g *tooluse.Gate, s tooluse.Scope, tc llms.ToolCall) (llms.ToolCallResponse, tooluse.Outcome) {
	var o tooluse.Outcome
	if tc.FunctionCall == nil {
		o = refuse(tc.ID, "", "the tool call names no function")
		return llms.ToolCallResponse{ToolCallID: tc.ID, Content: o.Text()}, o
	}
	o = g.Run(ctx, s, tooluse.Request{ID: tc.ID, Name: tc.FunctionCall.Name, Args: json.RawMessage(tc.FunctionCall.Arguments)})
	return llms.ToolCallResponse{ToolCallID: tc.ID, Name: tc.FunctionCall.Name, Content: o.Text()}, o
}

// refuse is the outcome of call id of tool name that is not proposed.
func refuse(id, name, reason string) tooluse.Outcome {
	return tooluse.Outcome{CallID: id, Tool: name, State: tooluse.Denied,
		Ticket: stepup.Ticket{Status: stepup.StatusDenied, Reason: reason}}
}

// Executor runs a LangChainGo tool for the gate: register it with
// gate.WithExecutor under the tool's catalog name. It hands the tool the
// stored input, and the idempotency key in the context
// (tooluse.IdempotencyKey); the tool's output is kept as a JSON string,
// which tooluse gives back to the model as the same text.
//
// The input is the member named exactly "input". Arguments with two
// member names that differ only in letter case, in any object, are
// refused without running the tool, as asu's gate refuses them at
// Propose: a decoder that ignores case would read them as one member.
type Executor struct {
	Tool tools.Tool
}

// errNoTool is the error of an [Executor] that has no tool to run.
var errNoTool = errors.New("langchaingo: no tool")

// Execute runs the tool with the input of effect e.
func (x Executor) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	if x.Tool == nil {
		return nil, errNoTool
	}
	if err := foldnames.Check(e.Args); err != nil {
		return nil, fmt.Errorf("langchaingo: %s: not run: %w", x.Tool.Name(), err)
	}
	args, err := canon.Parse(e.Args)
	in, ok := args.Get("input")
	if err != nil || !ok || in.Kind() != canon.KindString {
		return nil, fmt.Errorf("langchaingo: %s: arguments are not {\"input\": string}", x.Tool.Name())
	}
	if ctx == nil {
		ctx = context.Background()
	}
	out, err := x.Tool.Call(tooluse.WithIdempotencyKey(ctx, key), in.String())
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
