package eino_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	einoadapter "github.com/agentstepup/asu/adapters/eino"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// bench is a checkpointed ToolsNode graph of wrapped seed tools on asu's
// in-process gate, every tool run by a recorder.
type bench struct {
	h   *stepuptest.Harness
	rec *stepuptest.Recorder
	run compose.Runnable[*schema.Message, []*schema.Message]
	ctx context.Context
}

func newBench(t *testing.T) *bench {
	t.Helper()
	rec := &stepuptest.Recorder{}
	var opts []gate.Option
	var tools []tool.BaseTool
	for _, st := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(st.Name, rec))
	}
	h0 := &bench{rec: rec, h: stepuptest.NewGate(t, nil, opts...)}
	g := tooluse.New(h0.h.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	for _, name := range []string{"send_email", "write_draft", "delete_everything"} {
		tools = append(tools, einoadapter.Wrap(g, infoTool(name)))
	}
	ctx := context.Background()
	tn, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools})
	require.NoError(t, err)
	gr := compose.NewGraph[*schema.Message, []*schema.Message]()
	require.NoError(t, gr.AddToolsNode("tools", tn))
	require.NoError(t, gr.AddEdge(compose.START, "tools"))
	require.NoError(t, gr.AddEdge("tools", compose.END))
	h0.run, err = gr.Compile(ctx, compose.WithCheckPointStore(&memoryCheckpoints{}))
	require.NoError(t, err)
	h0.ctx = tooluse.WithScope(ctx, tooluse.Scope{
		Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"},
		Session:   "sess-1", Task: "t-1", Taint: []string{"read web page https://example.org/offer"}})
	return h0
}

func call(id, name, args string) *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{{ID: id, Type: "function",
		Function: schema.FunctionCall{Name: name, Arguments: args}}})
}

func TestAllowedCallRunsInTheGraph(t *testing.T) {
	b := newBench(t)
	out, err := b.run.Invoke(b.ctx, call("c1", "write_draft", `{"to":"a@example.com"}`), compose.WithCheckPointID("cp"))
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, `{"sent":true}`, out[0].Content)
	assert.Equal(t, "c1", out[0].ToolCallID)
	require.Equal(t, 1, b.rec.Count())
	assert.Equal(t, "c1", b.rec.Runs()[0].Step, "Eino's tool call id is the step")
}

func TestDeniedCallIsAnObservation(t *testing.T) {
	b := newBench(t)
	out, err := b.run.Invoke(b.ctx, call("c1", "delete_everything", `{}`), compose.WithCheckPointID("cp"))
	require.NoError(t, err, "a denial does not stop the graph")
	assert.Contains(t, out[0].Content, "Not run: denied")
	assert.Zero(t, b.rec.Count())
}

func TestNoScopeIsRefused(t *testing.T) {
	b := newBench(t)
	out, err := b.run.Invoke(context.Background(), call("c1", "write_draft", `{}`), compose.WithCheckPointID("cp"))
	require.NoError(t, err)
	assert.Contains(t, out[0].Content, "no scope")
	assert.Zero(t, b.rec.Count())
}

// TestResumeDataDoesNotApprove resumes a pending call with every spelling
// of "approved" as resume data, and without targeting it: nothing runs
// until the approver approves through the gate.
func TestResumeDataDoesNotApprove(t *testing.T) {
	b := newBench(t)
	_, err := b.run.Invoke(b.ctx, call("c1", "send_email", `{"to":"finance@example.com"}`), compose.WithCheckPointID("cp"))
	w := einoadapter.Pending(err)
	require.Len(t, w, 1)
	assert.Equal(t, "send_email", w[0].Tool)
	assert.Contains(t, w[0].String(), string(w[0].Ticket))
	for _, data := range []any{true, "yes", "approved", map[string]any{"approved": true}, nil} {
		id, ok := einoadapter.InterruptID(err, w[0].Ticket)
		require.True(t, ok)
		_, err = b.run.Invoke(compose.ResumeWithData(b.ctx, id, data), nil, compose.WithCheckPointID("cp"))
		require.Len(t, einoadapter.Pending(err), 1, "still waiting after resume data %v", data)
		_, err = b.run.Invoke(b.ctx, nil, compose.WithCheckPointID("cp")) // not targeted
		require.Len(t, einoadapter.Pending(err), 1)
		assert.Equal(t, "send_email", einoadapter.Pending(err)[0].Tool)
	}
	assert.Zero(t, b.rec.Count())

	_, aerr := b.h.Approve(w[0].Ticket)
	require.NoError(t, aerr)
	id, _ := einoadapter.InterruptID(err, w[0].Ticket)
	out, err := b.run.Invoke(compose.Resume(b.ctx, id), nil, compose.WithCheckPointID("cp"))
	require.NoError(t, err)
	assert.Equal(t, `{"sent":true}`, out[0].Content)
	assert.Equal(t, 1, b.rec.Count())
}

func TestDeniedWhileWaiting(t *testing.T) {
	b := newBench(t)
	_, err := b.run.Invoke(b.ctx, call("c1", "send_email", `{"to":"finance@example.com"}`), compose.WithCheckPointID("cp"))
	w := einoadapter.Pending(err)
	require.Len(t, w, 1)
	_, derr := b.h.Deny(w[0].Ticket, "wrong recipient")
	require.NoError(t, derr)
	id, _ := einoadapter.InterruptID(err, w[0].Ticket)
	out, err := b.run.Invoke(compose.Resume(b.ctx, id), nil, compose.WithCheckPointID("cp"))
	require.NoError(t, err)
	assert.Contains(t, out[0].Content, "wrong recipient")
	assert.Zero(t, b.rec.Count())
}

func TestPendingOfOtherErrors(t *testing.T) {
	assert.Nil(t, einoadapter.Pending(nil))
	assert.Nil(t, einoadapter.Pending(errors.New("boom")))
	_, ok := einoadapter.InterruptID(errors.New("boom"), "tk")
	assert.False(t, ok)
}

type failing struct{ infoTool }

func (failing) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	return "", errors.New("smtp down")
}

// TestExecutor hands the tool the stored arguments and the key, and keeps
// its text as a JSON string; a tool error is the executor's error.
func TestExecutor(t *testing.T) {
	var gotArgs, gotKey string
	echo := echoTool{infoTool: "echo", f: func(ctx context.Context, args string) (string, error) {
		gotArgs = args
		gotKey, _ = tooluse.IdempotencyKey(ctx)
		return "line 1\n\"quoted\"", nil
	}}
	out, err := einoadapter.Executor{Tool: echo}.Execute(context.Background(),
		canon.Effect{Tool: "echo", Args: []byte(`{"a":1}`)}, "key-1")
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, gotArgs)
	assert.Equal(t, "key-1", gotKey)
	assert.JSONEq(t, `"line 1\n\"quoted\""`, string(out))

	_, err = einoadapter.Executor{Tool: failing{"f"}}.Execute(context.Background(), canon.Effect{Args: []byte(`{}`)}, "k")
	assert.Error(t, err)
}

type echoTool struct {
	infoTool
	f func(ctx context.Context, args string) (string, error)
}

func (e echoTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	return e.f(ctx, args)
}

var _ tool.InvokableTool = echoTool{}
