// Package eino puts asu's gate in front of Eino tools
// (github.com/cloudwego/eino). [Wrap] gives the agent a tool.InvokableTool
// whose every invocation is proposed to the gate; [Executor] runs the real
// tool inside the gate once a call may run.
//
// # Interrupt and resume
//
// A call that needs a person interrupts the graph with
// tool.StatefulInterrupt: the interrupt's info is a [*Waiting] naming the
// ticket, and the state Eino checkpoints is the ticket id and nothing
// else. When the host resumes the graph with that interrupt as the
// target, the wrapped tool executes the ticket. Eino hands a resumed tool
// the arguments from its checkpoint; the wrapped tool ignores them,
// because the gate runs the call it stored when it was proposed. Editing
// the checkpoint between approval and resume therefore cannot change
// what runs. Data passed with the resume is ignored too: only the gate's
// approver approves.
package eino

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/agentstepup/asu/adapters/internal/foldnames"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Waiting is the info of the interrupt a gated tool raises when its call
// waits for a person. Show the approver's link for Ticket; resume the
// interrupt once the ticket is decided.
type Waiting struct {
	Ticket    stepup.TicketID
	Tool      string
	ExpiresAt time.Time
}

// String says what the interrupt waits for.
func (w *Waiting) String() string {
	if w == nil {
		return "nothing waits for approval"
	}
	return fmt.Sprintf("%s waits for approval (ticket %s)", w.Tool, w.Ticket)
}

// Wrap returns t as the agent sees it behind the gate g: the same Info,
// so the model sees the same tool, but InvokableRun proposes the call
// with the [tooluse.Scope] its context carries (see tooluse.WithScope),
// waits for a person as g's options say, interrupts if the call is still
// pending, and executes it by ticket id. The agent side never calls t's
// InvokableRun: register [Executor] for t with the gate.
//
// The tool result is [tooluse.Outcome.Text]: a denial or failure is an
// observation for the model, not an error that stops the graph. A
// context without a scope is refused. A nil t has no Info: its every
// call fails with an error.
func Wrap(g *tooluse.Gate, t tool.BaseTool) tool.InvokableTool {
	return &gated{g: g, t: t}
}

// errNoTool is the error of a wrapped tool or an [Executor] that has no
// Eino tool to describe or run.
var errNoTool = errors.New("eino: no tool")

type gated struct {
	g *tooluse.Gate
	t tool.BaseTool
}

func (w *gated) Info(ctx context.Context) (*schema.ToolInfo, error) {
	if w.t == nil {
		return nil, errNoTool
	}
	info, err := w.t.Info(orBackground(ctx))
	if err == nil && info == nil {
		err = errors.New("the tool gave no info")
	}
	return info, err
}

func (w *gated) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	ctx = orBackground(ctx)
	if was, ok, id := tool.GetInterruptState[string](ctx); was && ok && id != "" {
		return w.resume(ctx, stepup.TicketID(id))
	}
	info, err := w.Info(ctx)
	if err != nil {
		return "", fmt.Errorf("eino: tool info: %w", err)
	}
	r := tooluse.Request{ID: compose.GetToolCallID(ctx), Name: info.Name, Args: json.RawMessage(args)}
	s, ok := tooluse.ScopeFrom(ctx)
	if !ok {
		return tooluse.Unscoped(r).Text(), nil
	}
	o := w.g.Run(ctx, s, r)
	if o.State == tooluse.Pending {
		return "", interrupt(ctx, o)
	}
	return o.Text(), nil
}

// resume runs ticket id when this interrupt is the resume's target; the
// arguments Eino passed from its checkpoint play no part.
func (w *gated) resume(ctx context.Context, id stepup.TicketID) (string, error) {
	if target, _, _ := tool.GetResumeContext[any](ctx); !target { // another interrupt is resumed
		o := tooluse.Outcome{Ticket: stepup.Ticket{ID: id}}
		if info, err := w.Info(ctx); err == nil {
			o.Tool = info.Name
		}
		return "", interrupt(ctx, o)
	}
	o := w.g.Resume(ctx, id)
	if o.State == tooluse.Pending {
		return "", interrupt(ctx, o)
	}
	return o.Text(), nil
}

// interrupt checkpoints the ticket id only.
func interrupt(ctx context.Context, o tooluse.Outcome) error {
	info := &Waiting{Ticket: o.Ticket.ID, Tool: o.Ticket.Tool, ExpiresAt: o.Ticket.ExpiresAt}
	if info.Tool == "" {
		info.Tool = o.Tool
	}
	return tool.StatefulInterrupt(ctx, info, string(o.Ticket.ID))
}

// Pending returns what the interrupts in err wait for, from the
// interrupt error a graph's Invoke returned.
func Pending(err error) []*Waiting {
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		return nil
	}
	var out []*Waiting
	for _, ic := range info.InterruptContexts {
		if w, ok := ic.Info.(*Waiting); ok {
			out = append(out, w)
		}
	}
	return out
}

// InterruptID returns the id of the interrupt in err that waits for
// ticket id, to resume it with compose.Resume.
func InterruptID(err error, id stepup.TicketID) (string, bool) {
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		return "", false
	}
	for _, ic := range info.InterruptContexts {
		if w, ok := ic.Info.(*Waiting); ok && w.Ticket == id {
			return ic.ID, true
		}
	}
	return "", false
}

// Executor runs an Eino tool for the gate: register it with
// gate.WithExecutor under the tool's catalog name. It hands the tool the
// stored canonical arguments, and the idempotency key in the context
// (tooluse.IdempotencyKey); the tool's text output is kept as a JSON
// string, which tooluse gives back to the model as the same text.
//
// Arguments with two member names that differ only in letter case, in
// any object, are refused without running the tool: Eino's tools decode
// with sonic, which takes such names for one member and keeps the last,
// so the tool would run with a value the card showed under another
// name. asu's gate refuses such calls at Propose; Executor checks again
// for calls stored by any gate.
type Executor struct {
	Tool tool.InvokableTool
}

// Execute runs the tool with effect e's arguments.
func (x Executor) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	if x.Tool == nil {
		return nil, errNoTool
	}
	if err := foldnames.Check(e.Args); err != nil {
		return nil, fmt.Errorf("eino: not run: %w", err)
	}
	out, err := x.Tool.InvokableRun(tooluse.WithIdempotencyKey(orBackground(ctx), key), string(e.Args))
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// orBackground is ctx, or the background context for a nil one.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
