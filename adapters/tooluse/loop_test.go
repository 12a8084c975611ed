package tooluse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

// toolLoop is a model tool-use loop built on tooluse, behind the
// stepup.Runtime the attack kit drives: Propose is the model writing a
// tool call, Execute is the host resuming it. It keeps what such loops
// keep (a checkpoint of each pending request, the transcript, hooks), and
// all of it can be tampered with; a sound loop resumes by ticket id only.
type toolLoop struct {
	g *tooluse.Gate
	// naive resumes the way a weak loop does: it runs the checkpointed
	// request itself once the ticket is approved, so the kit can show it
	// catches that.
	naive bool
	tools *attackkit.Tools
	rt    stepup.Runtime

	mu         sync.Mutex
	n          int
	checkpoint map[stepup.TicketID]pendingCall
	hooks      []func(*stepup.Call)
	transcript []string
}

// pendingCall is what the loop checkpoints for a call waiting for a
// person: the request as the model wrote it and the scope it ran in.
type pendingCall struct {
	req   tooluse.Request
	scope tooluse.Scope
}

func newToolLoop(rt stepup.Runtime, tools *attackkit.Tools, naive bool) *toolLoop {
	return &toolLoop{g: tooluse.New(rt, &tooluse.Options{Wait: adaptertest.Wait}),
		rt: rt, tools: tools, naive: naive, checkpoint: map[stepup.TicketID]pendingCall{}}
}

// split turns the kit's call into what a model writes and what the host
// knows.
func split(c stepup.Call) (tooluse.Scope, tooluse.Request) {
	return tooluse.Scope{Principal: c.Principal, Session: c.Session, Task: c.Task, Taint: c.Taint,
			Rationale: c.Rationale, Grant: c.Grant},
		tooluse.Request{ID: c.Step, Name: c.Tool, Args: c.Args}
}

func (l *toolLoop) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	s, r := split(c)
	o := l.g.Propose(ctx, s, r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.transcript = append(l.transcript, "tool: "+o.Text())
	if o.Ticket.ID != "" {
		l.checkpoint[o.Ticket.ID] = pendingCall{req: r, scope: s}
	}
	if o.Err != nil {
		return stepup.Ticket{}, o.Err
	}
	return o.Ticket, nil
}

func (l *toolLoop) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	return l.rt.Wait(ctx, id)
}

// Execute resumes ticket id: the hooks see the checkpointed call (to log
// it, say), and the gate runs the ticket.
func (l *toolLoop) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	l.mu.Lock()
	cp := l.checkpoint[id]
	call := cp.scope.Call(cp.req)
	for _, h := range l.hooks {
		h(&call)
	}
	l.mu.Unlock()
	if l.naive {
		return l.naiveResume(ctx, id, call)
	}
	o := l.g.Resume(ctx, id)
	l.mu.Lock()
	l.transcript = append(l.transcript, "tool: "+o.Text())
	l.mu.Unlock()
	return result(o)
}

// naiveResume checks the ticket is approved, then runs the call it holds.
func (l *toolLoop) naiveResume(ctx context.Context, id stepup.TicketID, call stepup.Call) (stepup.Result, error) {
	wctx, cancel := context.WithTimeout(ctx, adaptertest.Wait)
	tk, err := l.rt.Wait(wctx, id)
	cancel()
	if err != nil || !tk.Status.Runnable() {
		return stepup.Result{}, stepup.ErrNotApproved
	}
	out, err := l.tools.Execute(ctx, effect(call), string(id))
	return stepup.Result{Ticket: id, Output: out}, err
}

// result turns an outcome back into Execute's answer.
func result(o tooluse.Outcome) (stepup.Result, error) {
	switch {
	case o.State == tooluse.Ran:
		return o.Result, nil
	case o.Err != nil:
		return stepup.Result{}, o.Err
	case o.State == tooluse.Spent:
		return stepup.Result{}, stepup.ErrConsumed
	}
	return stepup.Result{}, fmt.Errorf("ticket %s: %w", o.State, stepup.ErrNotApproved)
}

func (l *toolLoop) say(_ context.Context, id stepup.TicketID, text string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.transcript = append(l.transcript, "user: "+text)
	return nil
}

// editCheckpoint edits the request and scope checkpointed under ticket id.
func (l *toolLoop) editCheckpoint(_ context.Context, id stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cp := l.checkpoint[id]
	c := cp.scope.Call(cp.req)
	edit(&c)
	s, r := split(c)
	l.checkpoint[id] = pendingCall{req: r, scope: s}
	return nil
}

func (l *toolLoop) addHook(_ context.Context, _ stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, edit)
	return nil
}

// resubmit is the model writing the tool call again: a new request.
func (l *toolLoop) resubmit(ctx context.Context, _ stepup.TicketID, c stepup.Call) (stepup.Result, error) {
	s, r := split(c)
	l.mu.Lock()
	l.n++
	r.ID = fmt.Sprintf("%s-again-%d", r.ID, l.n)
	l.mu.Unlock()
	return result(l.g.Run(ctx, s, r))
}

// effect is what a naive loop hands its tool.
func effect(c stepup.Call) canon.Effect {
	return canon.Effect{Tool: c.Tool, Args: json.RawMessage(c.Args), Principal: c.Principal}
}

// target is the loop as the kit's target.
func (l *toolLoop) target(people attackkit.Approver, advance func(time.Duration)) attackkit.Target {
	return attackkit.Target{Runtime: l, People: people, Say: l.say,
		Checkpoint: l.editCheckpoint, Hook: l.addHook, History: l.editCheckpoint, Resubmit: l.resubmit,
		Advance: advance}
}

// view is the transcript: every tool result the model read, and what was
// said in the chat.
func (l *toolLoop) view(context.Context) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.transcript...), nil
}
