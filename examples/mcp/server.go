package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
)

// gatedTool is one tool the MCP server offers: what the model sees of it.
// Whether a call runs is the gate's to decide, by its own catalog; a tool
// offered here but missing from the catalog is denied as unknown.
type gatedTool struct {
	Name string
	// Description is the upstream server's text, shown to the model as the
	// upstream server wrote it. The gate's card shows it only in the region
	// written by others.
	Description string
	// InputSchema is the JSON Schema of the arguments (an object schema).
	InputSchema json.RawMessage
	// Class is the effect class the integrator confirmed, or empty when the
	// tool is not in the catalog. The hints this server advertises are
	// derived from it, never copied from upstream.
	Class string
}

// serverConfig is what the integrator sets; none of it comes from a request.
type serverConfig struct {
	// Principal is whom every call acts for. An MCP request cannot name or
	// change it, in its arguments or in _meta.
	Principal canon.Principal
	// Task is recorded with every call (its effect and card).
	Task string
	// WaitTimeout bounds how long a tools/call waits for an approver
	// (default 5 minutes); the request's own context bounds it too.
	WaitTimeout time.Duration
	// OnPending is told of every call that waits for a person, so the
	// approver can be sent the approval link. The model never sees it.
	OnPending func(stepup.Ticket)
}

// gated is the tools/call handler shared by every gated tool.
type gated struct {
	rt       stepup.Runtime
	cfg      serverConfig
	sessions *sessionIDs
	classes  map[string]string // confirmed effect class by tool name
}

// gatedServer returns an MCP server offering tools, whose calls are
// proposed to rt and run only through rt.Execute, by ticket id.
func gatedServer(rt stepup.Runtime, tools []gatedTool, cfg serverConfig) *mcp.Server {
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = 5 * time.Minute
	}
	if cfg.OnPending == nil {
		cfg.OnPending = func(stepup.Ticket) {}
	}
	h := &gated{rt: rt, cfg: cfg, sessions: newSessionIDs(), classes: make(map[string]string, len(tools))}
	s := mcp.NewServer(&mcp.Implementation{Name: "asu-gated", Version: "v0.1.0"}, nil)
	offered := make(map[string]bool, len(tools))
	for _, t := range tools {
		h.classes[t.Name] = t.Class
		s.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
			Annotations: annotationsFor(t.Class)}, h.call)
		offered[t.Name] = true
	}
	// A call of a tool never offered is a tool error like any denial, not
	// the protocol error the SDK would answer, so the model reads why.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && !offered[r.Params.Name] {
				return refused("denied: unknown tool"), nil
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// call handles one tools/call: propose, wait for a person if the policy
// says so, then execute the STORED call by ticket id. Every refusal is a
// tool result with isError set, an observation for the model; the
// approval link is never part of it.
func (h *gated) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	session, err := h.sessions.of(req.Session)
	if err != nil {
		return refused("denied: the call has no session"), nil
	}
	args := req.Params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	tk, err := h.rt.Propose(ctx, stepup.Call{Tool: req.Params.Name, Args: args, Task: h.cfg.Task,
		Session: session, Principal: h.cfg.Principal, Taint: h.sessions.taintOf(session)})
	if err != nil {
		return refused("denied: the gate could not decide"), nil
	}
	if tk.Status == stepup.StatusPending {
		h.cfg.OnPending(tk)
		wctx, cancel := context.WithTimeout(ctx, h.cfg.WaitTimeout)
		tk, err = h.rt.Wait(wctx, tk.ID)
		cancel()
		switch {
		case ctx.Err() != nil:
			return refused("not run: the call was cancelled before anyone decided"), nil
		case errors.Is(err, context.DeadlineExceeded):
			return refused("not run: no decision in time"), nil
		case err != nil:
			return refused("not run: the gate could not report a decision"), nil
		}
	}
	if !tk.Status.Runnable() {
		return refused(outcome(tk)), nil
	}
	res, err := h.rt.Execute(ctx, tk.ID)
	switch {
	case errors.Is(err, stepup.ErrConsumed):
		return refused(alreadyUsed), nil
	case errors.Is(err, stepup.ErrExpired):
		return refused("expired: the approval expired before it ran"), nil
	case errors.Is(err, stepup.ErrEffectChanged):
		return refused("not run: the action differs from what was approved"), nil
	case errors.Is(err, stepup.ErrNotApproved):
		return refused("not run: the approval no longer holds"), nil
	case err != nil:
		return refused("failed: the tool did not complete"), nil
	}
	if h.classes[req.Params.Name] == card.ClassRead {
		// What a read returns is content nobody vetted, and it now reaches
		// the model: later external and irreversible calls of this session
		// need a person, and their cards say what was read.
		h.sessions.addTaint(session, "read the output of "+req.Params.Name)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}}, nil
}

// alreadyUsed answers the call that lost the race for a ticket it shares
// with an identical call of the same session.
const alreadyUsed = "not run again: this approval was already used, by an identical call merged with this one"

// outcome says why a ticket will not run, led by its status.
func outcome(tk stepup.Ticket) string {
	if tk.Status == stepup.StatusExecuting || tk.Status == stepup.StatusExecuted {
		return alreadyUsed // a merged twin's handler executed it first
	}
	if strings.HasPrefix(tk.Reason, string(tk.Status)) {
		return tk.Reason
	}
	return string(tk.Status) + ": " + tk.Reason
}

// refused is a tool error the model reads as an observation.
func refused(reason string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: reason}}}
}

// annotationsFor is what this server tells its client about a tool: hints
// derived from the class the integrator confirmed. A tool outside the
// catalog gets the protocol's worst-case defaults.
func annotationsFor(class string) *mcp.ToolAnnotations {
	yes, no := true, false
	switch class {
	case card.ClassRead:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, OpenWorldHint: &no}
	case card.ClassReversible:
		return &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}
	case card.ClassExternal:
		return &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes}
	default:
		return &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}
	}
}
