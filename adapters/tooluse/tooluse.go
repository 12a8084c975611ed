package tooluse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Request is one tool call as the model wrote it.
type Request struct {
	// ID is the model's id for the call (OpenAI's tool_call id,
	// Anthropic's tool_use id). It becomes the call's step.
	ID string
	// Name is the tool's name, which the gate looks up in its catalog.
	Name string
	// Args are the JSON arguments as the model wrote them. Empty means
	// no arguments ({}).
	Args json.RawMessage
}

// Scope is what the host knows about a call and the model does not
// choose: whom it acts for and which run it belongs to.
type Scope struct {
	// Principal is the user, the agent and any delegations the call acts
	// for.
	Principal canon.Principal
	// Session groups the calls of one agent run; Task names the unit of
	// work.
	Session, Task string
	// Taint lists the untrusted content the session has seen.
	Taint []string
	// Rationale is the agent's own explanation, shown to the approver
	// only in the region labelled as written by the agent.
	Rationale string
	// Grant names a delegated approval the call claims to be covered by.
	Grant string
}

// Call returns the stepup.Call for request r in scope s. The model's call
// id is the step.
func (s Scope) Call(r Request) stepup.Call {
	args := r.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	return stepup.Call{
		Tool: r.Name, Args: args,
		Task: s.Task, Step: r.ID, Session: s.Session,
		Principal: s.Principal, Taint: s.Taint, Rationale: s.Rationale, Grant: s.Grant,
	}
}

// DefaultWait is how long [Gate.Run] and [Gate.Resume] wait for a
// person's decision when [Options.Wait] is zero.
const DefaultWait = 30 * time.Second

// Options tune a [Gate]. The zero value is usable.
type Options struct {
	// Wait bounds how long Run and Resume wait for a pending call to be
	// decided before answering [Pending]; zero means [DefaultWait].
	Wait time.Duration
	// Observe, when set, is told every outcome before it is returned: to
	// show the approval link of a pending ticket, to log, to count.
	Observe func(ctx context.Context, o Outcome)
}

// Gate runs models' tool calls through a stepup.Runtime. It is safe for
// concurrent use if the Runtime is. A nil Gate, or one without a Runtime,
// runs nothing: every call is [Denied] with an error wrapping
// stepup.ErrConfig.
type Gate struct {
	rt      stepup.Runtime
	opts    Options
	waiting waiting
}

// New returns a Gate over rt: the in-process gate, or the HTTP client of
// a remote one. opts may be nil.
func New(rt stepup.Runtime, opts *Options) *Gate {
	if v := reflect.ValueOf(rt); v.Kind() == reflect.Pointer && v.IsNil() {
		rt = nil // a nil *gate.Gate in the interface would panic on first use
	}
	g := &Gate{rt: rt}
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Wait <= 0 {
		g.opts.Wait = DefaultWait
	}
	return g
}

// errNoRuntime is the error of every outcome of a Gate that has no
// Runtime to ask.
var errNoRuntime = fmt.Errorf("tooluse: %w: the Gate has no Runtime (make it with New)", stepup.ErrConfig)

// unready is the outcome of call id of tool name when g cannot ask a
// Runtime, or false when it can.
func (g *Gate) unready(id, name string) (Outcome, bool) {
	if g != nil && g.rt != nil {
		return Outcome{}, false
	}
	return Outcome{CallID: id, Tool: name, State: Denied, Err: errNoRuntime}, true
}

// wait is how long g waits for a person: a Gate not made by New has no
// bound of its own.
func (g *Gate) wait() time.Duration {
	if g.opts.Wait <= 0 {
		return DefaultWait
	}
	return g.opts.Wait
}

// orBackground is ctx, or the background context for a nil one.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// Propose asks the gate to decide request r in scope s and never runs
// it: the outcome is [Runnable], [Pending] or [Denied]. A request with
// the same content as one still waiting (a model's retry under a new
// call id) joins that ticket: [Outcome.Joined] is set and no new ticket
// is proposed; if this Gate has begun to execute that ticket, the
// outcome says so ([Spent], or [NotRun] when the run was refused).
func (g *Gate) Propose(ctx context.Context, s Scope, r Request) Outcome {
	ctx = orBackground(ctx)
	if o, no := g.unready(r.ID, r.Name); no {
		return g.observe(ctx, o)
	}
	if o, ok := g.joined(ctx, s, r, false); ok {
		return g.observe(ctx, o)
	}
	o := g.propose(ctx, s, r)
	g.waits(s, r, o)
	return g.observe(ctx, o)
}

func (g *Gate) propose(ctx context.Context, s Scope, r Request) Outcome {
	o := Outcome{CallID: r.ID, Tool: r.Name}
	tk, err := g.rt.Propose(ctx, s.Call(r))
	if err != nil {
		o.State, o.Err = Denied, err // the gate could not decide: fail closed
		return o
	}
	o.Ticket = tk
	switch {
	case tk.Status.Runnable():
		o.State = Runnable
	case tk.Status == stepup.StatusPending:
		o.State = Pending
	default:
		o.State = Denied
	}
	return o
}

// Run proposes request r in scope s, waits up to [Options.Wait] for a
// person if it needs one, and executes it by ticket id if it may run.
// A request with the same content as one still waiting (a model's retry
// under a new call id) joins that ticket instead of proposing a new
// one: it waits for the same decision, the call runs at most once, and
// the outcome is what became of that ticket (see [Outcome.Joined]).
func (g *Gate) Run(ctx context.Context, s Scope, r Request) Outcome {
	ctx = orBackground(ctx)
	if o, no := g.unready(r.ID, r.Name); no {
		return g.observe(ctx, o)
	}
	if o, ok := g.joined(ctx, s, r, true); ok {
		return g.observe(ctx, o)
	}
	o := g.run(ctx, s, r)
	g.waits(s, r, o)
	return g.observe(ctx, o)
}

func (g *Gate) run(ctx context.Context, s Scope, r Request) Outcome {
	o := g.propose(ctx, s, r)
	if o.State == Runnable || o.State == Pending {
		next, _ := g.resume(ctx, o.Ticket.ID)
		next.CallID = o.CallID
		if next.Ticket.ID == "" {
			next.Ticket = o.Ticket
		}
		o = next
	}
	return o
}

// Resume waits up to [Options.Wait] for ticket id to be decided and
// executes it if it may run. It takes no arguments: what runs is the call
// the gate stored when it was proposed. Its outcome names no call id:
// to answer the model's original call, resume with [Gate.ResumeDeferred].
func (g *Gate) Resume(ctx context.Context, id stepup.TicketID) Outcome {
	ctx = orBackground(ctx)
	if o, no := g.unready("", ""); no {
		o.Ticket.ID = id
		return g.observe(ctx, o)
	}
	o, _ := g.resume(ctx, id)
	if o.State != Pending {
		g.waiting.forget(id)
	}
	return g.observe(ctx, o)
}

// resume is [Gate.Resume] without the bookkeeping; executed says it
// called the Runtime's Execute, so the outcome is what became of the
// approval, whatever it is.
func (g *Gate) resume(ctx context.Context, id stepup.TicketID) (o Outcome, executed bool) {
	o = Outcome{Ticket: stepup.Ticket{ID: id}}
	wctx, cancel := context.WithTimeout(ctx, g.wait())
	tk, err := g.rt.Wait(wctx, id)
	ended := wctx.Err() != nil
	cancel()
	if tk.ID != "" {
		o.Ticket = tk
	}
	o.Tool = o.Ticket.Tool
	if err != nil {
		// A Runtime may report the end of the wait as another error (a
		// store read cut short), so the wait's own context decides.
		if ended || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			// The wait ended before the decision: nothing ran, and the
			// ticket can be resumed later.
			o.State, o.Err = Pending, ctx.Err()
			return o, false
		}
		o.State, o.Err = classify(err), err
		return o, false
	}
	if o.State = decided(tk.Status); o.State != Runnable {
		return o, false
	}
	// Marked before the run starts, so that a retry joined to this
	// ticket that sees it running knows this Gate ran it (deferred.go).
	g.waiting.executing(id)
	res, err := g.rt.Execute(ctx, id)
	if err != nil {
		o.State, o.Err = classify(err), err
		return o, true
	}
	o.State, o.Result = Ran, res
	return o, true
}

// decided is what a ticket in status st says of its call, as seen by
// Wait: [Runnable] when it may run now.
func decided(st stepup.Status) State {
	switch {
	case st.Runnable():
		return Runnable
	case st == stepup.StatusPending:
		return Pending
	case st == stepup.StatusDenied:
		return Denied
	case st == stepup.StatusExecuting || st == stepup.StatusExecuted || st == stepup.StatusFailed:
		return Spent
	default: // expired, cancelled, revoked, abandoned
		return NotRun
	}
}

func (g *Gate) observe(ctx context.Context, o Outcome) Outcome {
	if g != nil && g.opts.Observe != nil {
		g.opts.Observe(ctx, o)
	}
	return o
}

// classify maps an error of Wait or Execute to what happened to the
// effect, by the sentinel it wraps.
func classify(err error) State {
	switch {
	case errors.Is(err, stepup.ErrOutcomeUnknown):
		return Unknown
	case errors.Is(err, stepup.ErrExecutorFailed):
		return Failed
	case errors.Is(err, stepup.ErrConsumed):
		return Spent
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// An Execute cut short by its context may have started the run.
		return Unknown
	default:
		return NotRun
	}
}
