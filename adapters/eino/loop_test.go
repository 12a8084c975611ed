package eino_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	einoadapter "github.com/agentstepup/asu/adapters/eino"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

// memoryCheckpoints is an Eino checkpoint store in memory. Its bytes are
// what a host keeps in Redis or a database, and what an attacker with
// access to it edits.
type memoryCheckpoints struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memoryCheckpoints) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

func (s *memoryCheckpoints) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[id] = b
	return nil
}

// infoTool is a tool the model sees by name; its runs happen in the gate.
type infoTool string

func (n infoTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: string(n), Desc: "a tool of the seed catalog"}, nil
}

// einoLoop is an Eino graph (a ToolsNode of gated tools, checkpointed)
// behind the stepup.Runtime the attack kit drives: Propose is the graph
// running the model's tool call, Execute is the host resuming the
// interrupt that waits for the ticket.
type einoLoop struct {
	rt     stepup.Runtime
	graph  compose.Runnable[*schema.Message, []*schema.Message]
	points *memoryCheckpoints

	mu      sync.Mutex
	n       int
	byCall  map[string]tooluse.Outcome // outcomes the gate reported, by the model's call id
	ran     map[stepup.TicketID]stepup.Result
	resumes map[stepup.TicketID]resumePoint
}

// resumePoint is where the host resumes a ticket: its checkpoint, the
// interrupt and the scope of the run.
type resumePoint struct {
	checkpoint, interrupt string
	scope                 tooluse.Scope
}

// wrapper makes the tool named name that the graph runs.
type wrapper func(g *tooluse.Gate, name string) tool.BaseTool

// gatedTool is the adapter under test.
func gatedTool(g *tooluse.Gate, name string) tool.BaseTool {
	return einoadapter.Wrap(g, infoTool(name))
}

func newEinoLoop(rt stepup.Runtime, wrap wrapper, tools ...string) (*einoLoop, error) {
	l := &einoLoop{rt: rt, points: &memoryCheckpoints{}, byCall: map[string]tooluse.Outcome{},
		ran: map[stepup.TicketID]stepup.Result{}, resumes: map[stepup.TicketID]resumePoint{}}
	g := tooluse.New(rt, &tooluse.Options{Wait: adaptertest.Wait, Observe: l.observe})
	var gated []tool.BaseTool
	for _, name := range tools {
		gated = append(gated, wrap(g, name))
	}
	ctx := context.Background()
	tn, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: gated})
	if err != nil {
		return nil, err
	}
	gr := compose.NewGraph[*schema.Message, []*schema.Message]()
	if err := gr.AddToolsNode("tools", tn); err != nil {
		return nil, err
	}
	_ = gr.AddEdge(compose.START, "tools")
	_ = gr.AddEdge("tools", compose.END)
	l.graph, err = gr.Compile(ctx, compose.WithCheckPointStore(l.points))
	return l, err
}

func (l *einoLoop) observe(_ context.Context, o tooluse.Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o.CallID != "" {
		l.byCall[o.CallID] = o
	}
}

func (l *einoLoop) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	l.mu.Lock()
	l.n++
	callID, cp := fmt.Sprintf("%s-%d", c.Step, l.n), fmt.Sprintf("cp-%d", l.n)
	l.mu.Unlock()
	s := tooluse.Scope{Principal: c.Principal, Session: c.Session, Task: c.Task, Taint: c.Taint,
		Rationale: c.Rationale, Grant: c.Grant}
	msg := schema.AssistantMessage("", []schema.ToolCall{{ID: callID, Type: "function",
		Function: schema.FunctionCall{Name: c.Tool, Arguments: string(c.Args)}}})
	_, err := l.graph.Invoke(tooluse.WithScope(ctx, s), msg, compose.WithCheckPointID(cp))
	l.mu.Lock()
	defer l.mu.Unlock()
	o, seen := l.byCall[callID]
	if waits := einoadapter.Pending(err); len(waits) == 1 {
		id, _ := einoadapter.InterruptID(err, waits[0].Ticket)
		l.resumes[waits[0].Ticket] = resumePoint{checkpoint: cp, interrupt: id, scope: s}
		return o.Ticket, nil
	}
	if err != nil {
		return stepup.Ticket{}, err // no such tool, say
	}
	if !seen {
		return stepup.Ticket{}, errors.New("the tool was not reached")
	}
	if o.State == tooluse.Ran { // allowed at once: the graph ran it
		l.ran[o.Ticket.ID] = o.Result
	}
	if o.Err != nil {
		return stepup.Ticket{}, o.Err
	}
	return o.Ticket, nil
}

func (l *einoLoop) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	return l.rt.Wait(ctx, id)
}

// Execute resumes the interrupt that waits for ticket id, from its
// checkpoint, as an Eino host does.
func (l *einoLoop) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	l.mu.Lock()
	if res, ok := l.ran[id]; ok { // ran when the graph first reached it
		delete(l.ran, id)
		l.mu.Unlock()
		return res, nil
	}
	rp, ok := l.resumes[id]
	l.mu.Unlock()
	if !ok {
		return stepup.Result{}, fmt.Errorf("no checkpoint waits for ticket %s: %w", id, stepup.ErrNotFound)
	}
	rctx := compose.Resume(tooluse.WithScope(ctx, rp.scope), rp.interrupt)
	out, err := l.graph.Invoke(rctx, nil, compose.WithCheckPointID(rp.checkpoint))
	if len(einoadapter.Pending(err)) > 0 {
		if iid, ok := einoadapter.InterruptID(err, id); ok { // the new checkpoint's interrupt
			l.mu.Lock()
			rp.interrupt = iid
			l.resumes[id] = rp
			l.mu.Unlock()
		}
		return stepup.Result{}, fmt.Errorf("still waiting: %w", stepup.ErrNotApproved)
	}
	if err != nil {
		return stepup.Result{}, err
	}
	if len(out) != 1 {
		return stepup.Result{}, fmt.Errorf("resume gave %d tool messages", len(out))
	}
	text := out[0].Content
	if text == `{"ok":true}` {
		return stepup.Result{Ticket: id, Output: json.RawMessage(text)}, nil
	}
	return stepup.Result{}, fmt.Errorf("%s: %w", text, stepup.ErrNotApproved)
}

// editCheckpoint is an attacker with write access to the checkpoint store:
// it rewrites the tool call Eino saved for ticket id, the arguments Eino
// hands the tool on resume.
func (l *einoLoop) editCheckpoint(ctx context.Context, id stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	rp, ok := l.resumes[id]
	l.mu.Unlock()
	if !ok {
		return stepup.ErrNotFound
	}
	raw, ok, err := l.points.Get(ctx, rp.checkpoint)
	if err != nil || !ok {
		return fmt.Errorf("no checkpoint: %v", err)
	}
	var doc any
	dec := json.NewDecoder(bytesReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	n := 0
	walk(doc, func(m map[string]any) {
		fn, ok := m["function"].(map[string]any)
		if !ok {
			return
		}
		name, _ := fn["name"].(string)
		args, _ := fn["arguments"].(string)
		c := stepup.Call{Tool: name, Args: json.RawMessage(args), Principal: rp.scope.Principal}
		edit(&c)
		fn["name"], fn["arguments"] = c.Tool, string(c.Args)
		n++
	})
	if n == 0 {
		return errors.New("no tool call in the checkpoint")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return l.points.Set(ctx, rp.checkpoint, out)
}

// walk calls f on every JSON object in v.
func walk(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, e := range x {
			walk(e, f)
		}
	case []any:
		for _, e := range x {
			walk(e, f)
		}
	}
}

func (l *einoLoop) target(people attackkit.Approver, advance func(time.Duration)) attackkit.Target {
	return attackkit.Target{Runtime: l, People: people, Checkpoint: l.editCheckpoint, Advance: advance}
}
