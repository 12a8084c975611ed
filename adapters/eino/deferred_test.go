package eino_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	einoadapter "github.com/agentstepup/asu/adapters/eino"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
)

// TestDeferredGraph runs a model node and the gated tools node in one
// checkpointed Eino graph: the model's call interrupts the graph while it
// waits for a person, the person approves, and resuming the interrupt
// runs the call once and answers the original call id with the tool's
// output, without asking the model again.
func TestDeferredGraph(t *testing.T) {
	w := adaptertest.NewWorld(t)
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	var asked atomic.Int32
	model := compose.InvokableLambda(func(_ context.Context, _ []*schema.Message) (*schema.Message, error) {
		asked.Add(1)
		return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function",
			Function: schema.FunctionCall{Name: "send_email", Arguments: `{"to":"finance@example.com","subject":"Q3"}`}}}), nil
	})
	tn, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: []tool.BaseTool{einoadapter.Wrap(g, infoTool("send_email"))}})
	require.NoError(t, err)
	gr := compose.NewGraph[[]*schema.Message, []*schema.Message]()
	require.NoError(t, gr.AddLambdaNode("model", model))
	require.NoError(t, gr.AddToolsNode("tools", tn))
	require.NoError(t, gr.AddEdge(compose.START, "model"))
	require.NoError(t, gr.AddEdge("model", "tools"))
	require.NoError(t, gr.AddEdge("tools", compose.END))
	run, err := gr.Compile(ctx, compose.WithCheckPointStore(&memoryCheckpoints{}))
	require.NoError(t, err)
	sctx := tooluse.WithScope(ctx, adaptertest.Scope())

	_, interrupted := run.Invoke(sctx, []*schema.Message{schema.UserMessage("Send the Q3 summary to finance.")}, compose.WithCheckPointID("run-1"))
	waiting := einoadapter.Pending(interrupted)
	require.Len(t, waiting, 1, "the graph is interrupted: %v", interrupted)
	assert.Zero(t, w.Rec.Count())

	_, err = w.Approve(waiting[0].Ticket)
	require.NoError(t, err)
	id, ok := einoadapter.InterruptID(interrupted, waiting[0].Ticket)
	require.True(t, ok)
	out, err := run.Invoke(compose.Resume(sctx, id), nil, compose.WithCheckPointID("run-1"))
	require.NoError(t, err)
	require.Len(t, out, 1, "one answer")
	assert.Equal(t, "call_1", out[0].ToolCallID, "to the original call id")
	assert.Equal(t, `{"sent":true}`, out[0].Content)
	assert.Equal(t, 1, w.Rec.Count(), "one run")
	assert.Equal(t, int32(1), asked.Load(), "the model is not asked again")
}
