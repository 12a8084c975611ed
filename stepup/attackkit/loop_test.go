package attackkit_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

// agentLoop is a framework's agent loop built on asu the way the kit's
// documentation asks: it keeps a checkpoint, a history, hooks and a chat
// transcript like any framework, and all of them can be tampered with,
// but it resumes a call by executing its ticket id, so none of them
// decides what runs.
type agentLoop struct {
	rt stepup.Runtime

	mu         sync.Mutex
	checkpoint map[stepup.TicketID]stepup.Call
	history    map[stepup.TicketID]stepup.Call
	hooks      []func(*stepup.Call)
	transcript []string
}

func newLoop(rt stepup.Runtime) *agentLoop {
	return &agentLoop{rt: rt, checkpoint: map[stepup.TicketID]stepup.Call{}, history: map[stepup.TicketID]stepup.Call{}}
}

// Propose asks the gate and checkpoints the call under its ticket.
func (l *agentLoop) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	tk, err := l.rt.Propose(ctx, c)
	if err != nil {
		return tk, err
	}
	l.mu.Lock()
	l.checkpoint[tk.ID], l.history[tk.ID] = c, c
	l.mu.Unlock()
	return tk, nil
}

// Wait waits on the gate.
func (l *agentLoop) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	return l.rt.Wait(ctx, id)
}

// Execute resumes from the checkpoint: the hooks see the call (to log it,
// say), and the gate runs the ticket.
func (l *agentLoop) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	l.mu.Lock()
	call := l.checkpoint[id]
	for _, h := range l.hooks {
		h(&call)
	}
	l.transcript = append(l.transcript, fmt.Sprintf("tool call %s %s", call.Tool, call.Args))
	l.mu.Unlock()
	return l.rt.Execute(ctx, id)
}

func (l *agentLoop) say(_ context.Context, id stepup.TicketID, text string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.transcript = append(l.transcript, string(id)+": "+text)
	return nil
}

func (l *agentLoop) editCheckpoint(_ context.Context, id stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.checkpoint[id]
	edit(&c)
	l.checkpoint[id] = c
	return nil
}

func (l *agentLoop) addHook(_ context.Context, _ stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, edit)
	return nil
}

func (l *agentLoop) editHistory(_ context.Context, id stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.history[id]
	edit(&c)
	l.history[id] = c
	l.checkpoint[id] = c // the loop rebuilds its checkpoint from history
	return nil
}

// resubmit sends a tool call again: the gate decides it as a new call,
// and it runs only if the gate says it may.
func (l *agentLoop) resubmit(ctx context.Context, _ stepup.TicketID, c stepup.Call) (stepup.Result, error) {
	tk, err := l.Propose(ctx, c)
	if err != nil {
		return stepup.Result{}, err
	}
	if !tk.Status.Runnable() {
		return stepup.Result{}, fmt.Errorf("resubmitted call is %s: %w", tk.Status, stepup.ErrNotApproved)
	}
	return l.Execute(ctx, tk.ID)
}

// target is the loop as the kit's target, answered by people and with
// the clock advance.
func (l *agentLoop) target(people attackkit.Approver, advance func(time.Duration)) attackkit.Target {
	return attackkit.Target{Runtime: l, People: people, Say: l.say,
		Checkpoint: l.editCheckpoint, Hook: l.addHook, History: l.editHistory, Resubmit: l.resubmit,
		Advance: advance, AgentView: l.view}
}

// view is the loop's transcript: everything it put in the agent's
// context besides what its Runtime methods returned.
func (l *agentLoop) view(context.Context) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.transcript...), nil
}
