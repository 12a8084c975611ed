package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
)

// Proxy defaults when [Options] says nothing.
const (
	DefaultWaitTimeout      = 5 * time.Minute
	DefaultProgressInterval = 5 * time.Second
	DefaultTask             = "mcp"
	// DefaultSessionIdleTimeout closes a streamable HTTP host session
	// that sent nothing for this long; a call waiting for a person keeps
	// its session open.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the streamable HTTP host sessions open at
	// once.
	DefaultMaxSessions = 1024
)

// ProtocolVersions are the MCP versions the gateway serves to hosts. The
// newest, 2026-07-28, forbids a server's own requests during a call
// (approval links would have to travel as a multi round-trip result), so
// it is not offered yet.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Reasons a call did not run, as the model reads them.
const (
	ReasonHostCancelled = "cancelled by the agent before a decision"
	ReasonDeclined      = stepup.ReasonDeclined
	// ReasonNoDecision starts with stepup.ReasonNoDecision, so the
	// approval page says nobody decided in time.
	ReasonNoDecision = stepup.ReasonNoDecision + ": the gateway's wait ended, and the request was cancelled"
	alreadyUsed      = "not run again: this approval was already used, by an identical call merged with this one"
)

// Options configures a [Proxy]; nil means defaults.
type Options struct {
	// Task is recorded with every call (default [DefaultTask]).
	Task string
	// WaitTimeout bounds how long a tools/call waits for an approver
	// (default [DefaultWaitTimeout]); the host's own cancellation ends it
	// sooner. Either way the ticket is cancelled.
	WaitTimeout time.Duration
	// ProgressInterval is how often a waiting call sends progress to a
	// host that asked for it (default [DefaultProgressInterval]).
	ProgressInterval time.Duration
	// ApprovalLink makes the link of the approval page of a ticket. It
	// goes to the person (URL elicitation, or a log message), never into
	// a tool result. Nil: no link is sent to the host.
	ApprovalLink func(stepup.TicketID) string
	// Canceller withdraws the ticket of a call the host gave up on. Nil
	// means the runtime's own Cancel when it has one (the in-process gate
	// and the HTTP client do); otherwise such tickets stay pending until
	// they time out, and an approval made meanwhile runs nothing.
	Canceller stepup.Canceller
	// OnPending is told of every call that starts waiting for a person
	// (the operator's log, a chat message to the approver).
	OnPending func(stepup.Ticket)
	// SessionIdleTimeout closes a host session of [Proxy.HTTPHandler]
	// that sent no request for this long (default
	// [DefaultSessionIdleTimeout]): a host that went away without ending
	// its session holds nothing for ever. A request in progress, such as
	// a call waiting for a person, keeps its session open; a host that
	// only listens for server messages should ping. A closed session's
	// requests get 404, and the host starts a new session.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the host sessions of [Proxy.HTTPHandler] open at
	// once (default [DefaultMaxSessions]). A host that starts one more is
	// refused with 503 and a JSON-RPC error saying so, until a session
	// ends (DELETE) or idles out.
	MaxSessions int
	// Logger gets one line per call: tool, ticket, status. Never
	// arguments. Nil discards.
	Logger *slog.Logger
	// EnforcedSchema returns the input schema the gate checks the
	// arguments of tool against, and whether the gate admits tool
	// (policy.Catalog.Schema is one). The host is shown that schema, not
	// the upstream's: after the upstream changes a tool's schema
	// (tools/list_changed), the model keeps seeing the one its calls are
	// held to, until the operator admits the change into the gate's
	// policy. Nil: each tool's schema as the proxy first listed it, which
	// is what [Catalog.Policy] builds the gate's check from.
	EnforcedSchema func(tool string) (schema json.RawMessage, admitted bool)
}

// Proxy is the host-facing MCP server of the gateway: it offers the
// upstream's tools, and every tools/call goes through the gate (a
// stepup.Runtime: a gate in this process, or a remote gateway's client).
// The call's principal is fixed by the integrator; nothing in a request,
// its arguments or its _meta, can name or change it.
type Proxy struct {
	rt        stepup.Runtime
	principal canon.Principal
	classes   func(string) string
	o         Options
	log       *slog.Logger
	server    *mcp.Server
	sessions  *sessions

	mu      sync.Mutex
	offered map[string]bool
	flights map[stepup.TicketID]*flight
	first   map[string]json.RawMessage // each tool's schema as first listed
	drifted map[string]bool            // tools whose upstream schema left the enforced one
}

// NewProxy returns the proxy of the tools listed by up, deciding every
// call through rt for principal. classes gives the effect class the
// catalog admits a tool with ("" when not admitted); it sets the hints
// the host is shown and which calls taint their session.
func NewProxy(rt stepup.Runtime, principal canon.Principal, up *Upstream, classes func(string) string, opts *Options) (*Proxy, error) {
	if rt == nil || up == nil || classes == nil {
		return nil, fmt.Errorf("%w: proxy needs a runtime, an upstream and the catalog's classes", stepup.ErrConfig)
	}
	if !strings.HasPrefix(principal.User, canon.PrefixUser) || !strings.HasPrefix(principal.Agent, canon.PrefixAgent) ||
		principal.Check() != nil {
		return nil, fmt.Errorf("%w: principal needs a user (user:NAME) and an agent (agent:NAME), lowercase ASCII", stepup.ErrConfig)
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.Task == "" {
		o.Task = DefaultTask
	}
	if o.OnPending == nil {
		o.OnPending = func(stepup.Ticket) {}
	}
	if c, ok := rt.(stepup.Canceller); ok && o.Canceller == nil {
		o.Canceller = c
	}
	p := &Proxy{rt: rt, principal: principal, classes: classes, o: o, log: o.Logger, sessions: newSessions(),
		offered: map[string]bool{}, flights: map[stepup.TicketID]*flight{},
		first: map[string]json.RawMessage{}, drifted: map[string]bool{}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.server = mcp.NewServer(&mcp.Implementation{Name: "asu-mcpgate", Version: "v0.1.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: ProtocolVersions,
		//lint:ignore SA1019 logging is how hosts without URL elicitation get the link; 2026-07-28 is not served
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}},
		Logger:       o.Logger,
	})
	// A call of a tool not offered is a tool error like any denial, not
	// the protocol error the SDK would answer, so the model reads why.
	p.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && !p.isOffered(r.Params.Name) {
				p.log.Info("call", "tool", r.Params.Name, "status", stepup.StatusDenied, "why", "not offered")
				return refused("denied: unknown tool"), nil
			}
			return next(ctx, method, req)
		}
	})
	p.SetTools(up.Tools())
	up.OnToolsChanged(p.SetTools)
	return p, nil
}

// Server returns the MCP server itself. Running it on a transport
// directly skips the strict message check; run it with [Proxy.Run], or
// serve it over HTTP with [Proxy.HTTPHandler], which both apply it.
func (p *Proxy) Server() *mcp.Server { return p.server }

// SetTools offers tools, the upstream's listing, in place of the current
// offer; hosts are told the list changed. A tool the catalog does not
// admit is offered, and every call of it is denied by the gate as
// unknown until the catalog admits it. Its hints are the catalog's,
// never upstream's; its description is upstream's, shown to the model as
// the tool's own and on approval cards only as untrusted text. Its input
// schema is the one the gate enforces ([Options.EnforcedSchema]).
func (p *Proxy) SetTools(tools []*mcp.Tool) {
	next := map[string]bool{}
	for _, u := range tools {
		upstream, err := objectSchema(u.InputSchema)
		if err != nil {
			p.log.Warn("upstream tool not offered: its input schema is not an object schema", "tool", u.Name)
			continue
		}
		schema := p.shownSchema(u.Name, upstream)
		t := &mcp.Tool{Name: u.Name, Title: u.Title, Description: u.Description, InputSchema: schema,
			Annotations: annotationsFor(p.classes(u.Name))}
		p.server.AddTool(t, p.call)
		next[u.Name] = true
	}
	p.mu.Lock()
	var gone []string
	for name := range p.offered {
		if !next[name] {
			gone = append(gone, name)
		}
	}
	p.offered = next
	p.mu.Unlock()
	if len(gone) > 0 {
		p.server.RemoveTools(gone...)
	}
}

// shownSchema returns the schema the host is shown for tool name, whose
// upstream schema is upstream: the one the gate enforces. A schema that
// drifted from it upstream is logged once.
func (p *Proxy) shownSchema(name string, upstream json.RawMessage) json.RawMessage {
	shown := upstream
	if p.o.EnforcedSchema != nil {
		s, admitted := p.o.EnforcedSchema(name)
		if !admitted || s == nil {
			return upstream // denied as unknown, or nothing is checked
		}
		if obj, err := objectSchema(json.RawMessage(s)); err == nil {
			shown = obj
		}
	} else {
		p.mu.Lock()
		if first, ok := p.first[name]; ok {
			shown = first
		} else {
			p.first[name] = upstream
		}
		p.mu.Unlock()
	}
	same := sameJSON(shown, upstream)
	p.mu.Lock()
	warn := !same && !p.drifted[name]
	p.drifted[name] = !same
	p.mu.Unlock()
	if warn {
		p.log.Warn("upstream changed a tool's input schema; hosts are shown the one the gate enforces until the operator admits the change",
			"tool", name)
	}
	return shown
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	ca, err1 := canon.Canonicalize(a)
	cb, err2 := canon.Canonicalize(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

func (p *Proxy) isOffered(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.offered[name]
}

// objectSchema re-encodes an upstream input schema, which must describe
// an object; a missing one accepts any object.
func objectSchema(schema any) (json.RawMessage, error) {
	if schema == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	var s struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
		return nil, fmt.Errorf("input schema does not describe an object")
	}
	return raw, nil
}

// call handles one tools/call: propose, wait for a person if the policy
// says so, then execute the STORED call by ticket id. Every refusal is a
// tool result with isError set, an observation for the model; the
// approval link is never part of it.
func (p *Proxy) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	session, err := p.sessions.of(req.Session)
	if err != nil {
		return refused("denied: the call has no session"), nil
	}
	args := req.Params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	for range maxRejoins + 1 {
		tk, err := p.rt.Propose(ctx, stepup.Call{Tool: name, Args: args, Task: p.o.Task,
			Session: session, Principal: p.principal, Taint: p.sessions.taintOf(session)})
		if err != nil {
			p.log.Warn("call", "tool", name, "status", "error", "why", "propose failed")
			return refused("denied: the gate could not decide"), nil
		}
		p.log.Info("call", "tool", name, "ticket", tk.ID, "digest", tk.Digest.Short(), "status", tk.Status)
		if tk.Status != stepup.StatusPending {
			if !tk.Status.Runnable() {
				return refused(outcome(tk)), nil
			}
			return p.execute(ctx, session, name, tk.ID), nil
		}
		res, again := p.await(ctx, req, session, tk)
		if !again {
			return res, nil
		}
		p.log.Info("call", "tool", name, "ticket", tk.ID, "status", "proposed again",
			"why", "withdrawn by an identical call that gave up")
	}
	return refused("not run: " + ReasonHostCancelled + " (an identical call gave up); call again"), nil
}

// maxRejoins bounds how often one tools/call proposes again after its
// ticket was withdrawn by an identical call that gave up.
const maxRejoins = 3

// execute runs ticket id and turns the outcome into what the host reads.
func (p *Proxy) execute(ctx context.Context, session, tool string, id stepup.TicketID) *mcp.CallToolResult {
	ctx, slot := withResultSlot(ctx)
	res, err := p.rt.Execute(ctx, id)
	switch {
	case errors.Is(err, stepup.ErrConsumed):
		return refused(alreadyUsed)
	case errors.Is(err, stepup.ErrExpired):
		return refused("expired: the approval expired before it ran")
	case errors.Is(err, stepup.ErrEffectChanged):
		return refused("not run: the action differs from what was approved (a file it names changed)")
	case errors.Is(err, stepup.ErrPolicyChanged):
		return refused("not run: the rules changed since the approval; call again")
	case errors.Is(err, stepup.ErrNotApproved):
		return refused("not run: the approval no longer holds")
	case errors.Is(err, ErrUpstreamTimeout):
		return refused("failed: the upstream server did not answer in time; the call may have had effects")
	case errors.Is(err, ErrUpstreamLost):
		return refused("unknown: the upstream server's connection ended during the call; the call may have had effects, do not repeat it")
	case errors.Is(err, ErrUpstreamDown):
		return refused("failed: the upstream server is not connected; it is being restarted")
	case errors.Is(err, ErrOutputTooLarge):
		return refused("failed: the upstream server's answer was too large")
	case errors.Is(err, stepup.ErrOutcomeUnknown):
		return refused("unknown: the call may have run; do not repeat it")
	case err != nil:
		return refused("failed: the tool did not complete")
	}
	if p.classes(tool) == card.ClassRead {
		// What a read returns is content nobody vetted, and it now reaches
		// the model: later external and irreversible calls of this session
		// need a person, and their cards say what was read.
		p.sessions.addTaint(session, "read the output of "+tool)
	}
	if r, ok := slot.result(res.Output); ok && r.Content != nil {
		return r // the upstream's answer, as the executor encoded it into res.Output
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(res.Output, &out); err != nil || out.Content == nil {
		// An executor other than the upstream's (a remote gateway's) answered.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}}
	}
	return &out
}

// outcome says why a ticket will not run, led by its status.
func outcome(tk stepup.Ticket) string {
	if tk.Status == stepup.StatusExecuting || tk.Status == stepup.StatusExecuted {
		return alreadyUsed // a merged twin's handler executed it first
	}
	if tk.Reason == "" {
		return string(tk.Status)
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
