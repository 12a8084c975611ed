package eino_test

import (
	"context"
	"encoding/json"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	einoadapter "github.com/agentstepup/asu/adapters/eino"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

// naiveTool is the usual human-in-the-loop tool of an Eino tutorial, with
// asu's gate asked for the decision only: it interrupts until the ticket
// is approved, then runs the arguments Eino hands it on resume. Those
// come from the checkpoint, so whoever edits the checkpoint chooses what
// runs. The kit must catch it.
type naiveTool struct {
	name  string
	g     *tooluse.Gate
	rt    stepup.Runtime
	tools *attackkit.Tools
}

func (n *naiveTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: n.name}, nil
}

func (n *naiveTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	s, _ := tooluse.ScopeFrom(ctx)
	if was, ok, id := tool.GetInterruptState[string](ctx); was && ok {
		wctx, cancel := context.WithTimeout(ctx, adaptertest.Wait)
		tk, _ := n.rt.Wait(wctx, stepup.TicketID(id))
		cancel()
		if target, _, _ := tool.GetResumeContext[any](ctx); !target || !tk.Status.Runnable() {
			return "", tool.StatefulInterrupt(ctx, &einoadapter.Waiting{Ticket: stepup.TicketID(id), Tool: n.name}, id)
		}
		out, err := n.tools.Execute(ctx, canon.Effect{Tool: n.name, Args: json.RawMessage(args), Principal: s.Principal}, id)
		return string(out), err
	}
	o := n.g.Propose(ctx, s, tooluse.Request{ID: "naive", Name: n.name, Args: json.RawMessage(args)})
	if o.State == tooluse.Pending {
		return "", tool.StatefulInterrupt(ctx, &einoadapter.Waiting{Ticket: o.Ticket.ID, Tool: n.name}, string(o.Ticket.ID))
	}
	return o.Text(), nil
}
