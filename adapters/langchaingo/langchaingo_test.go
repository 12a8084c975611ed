package langchaingo_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	gated "github.com/agentstepup/asu/adapters/langchaingo"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// mailer is a LangChainGo tool with an effect outside: it records what it
// sent.
type mailer struct {
	mu   sync.Mutex
	sent []string
	keys []string
}

func (m *mailer) Name() string        { return "mailer" }
func (m *mailer) Description() string { return "Sends the Q3 summary to the address given." }
func (m *mailer) Call(ctx context.Context, to string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key, _ := tooluse.IdempotencyKey(ctx)
	m.sent, m.keys = append(m.sent, to), append(m.keys, key)
	return "sent to " + to, nil
}

func (m *mailer) Sent() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.sent...)
}

var inputSchema = json.RawMessage(`{"type":"object","required":["input"],"properties":{"input":{"type":"string"}},"additionalProperties":false}`)

// catalog has the two wrapped tools: the mailer goes to a person, the
// calculator is a read.
func catalog(t testing.TB) *policy.Catalog {
	c, err := policy.NewCatalog("lc-1",
		policy.Tool{Name: "mailer", Title: "Send e-mail", Class: card.ClassExternal, Schema: inputSchema},
		policy.Tool{Name: "calculator", Title: "Calculate", Class: card.ClassRead, Schema: inputSchema})
	require.NoError(t, err)
	return c
}

// approving is a runtime whose proposals the approver answers at once,
// with her fake passkey, by decide; nil decide leaves them pending.
type approving struct {
	stepup.Runtime
	h      *stepuptest.Harness
	decide func(c stepup.Call) (approve bool, ok bool)
}

func (a approving) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	tk, err := a.Runtime.Propose(ctx, c)
	if err != nil || tk.Status != stepup.StatusPending || a.decide == nil {
		return tk, err
	}
	if approve, ok := a.decide(c); ok {
		go func() { // as a person would, while the tool waits
			if approve {
				_, _ = a.h.Approve(tk.ID)
			} else {
				_, _ = a.h.Deny(tk.ID, "not to that address")
			}
		}()
	}
	return tk, nil
}

type bench struct {
	h       *stepuptest.Harness
	mail    *mailer
	g       *tooluse.Gate
	seen    []tooluse.Outcome
	ctx     context.Context
	toolSet []tools.Tool
}

func newBench(t *testing.T, wait time.Duration, decide func(stepup.Call) (bool, bool)) *bench {
	b := &bench{mail: &mailer{}}
	b.h = stepuptest.NewGate(t, catalog(t),
		gate.WithExecutor("mailer", gated.Executor{Tool: b.mail}),
		gate.WithExecutor("calculator", gated.Executor{Tool: tools.Calculator{}}))
	var mu sync.Mutex
	b.g = tooluse.New(approving{Runtime: b.h.Gate, h: b.h, decide: decide}, &tooluse.Options{Wait: wait,
		Observe: func(_ context.Context, o tooluse.Outcome) { mu.Lock(); b.seen = append(b.seen, o); mu.Unlock() }})
	b.toolSet = []tools.Tool{gated.Wrap(b.g, b.mail), gated.Wrap(b.g, tools.Calculator{})}
	b.ctx = tooluse.WithScope(context.Background(), adaptertest.Scope())
	return b
}

// agent runs LangChainGo's one-shot agent with the fake LLM's replies.
func (b *bench) agent(t *testing.T, replies ...string) string {
	t.Helper()
	ex := agents.NewExecutor(agents.NewOneShotAgent(fake.NewFakeLLM(replies), b.toolSet), agents.WithMaxIterations(4))
	out, err := chains.Run(b.ctx, ex, "Send the Q3 summary to finance.")
	require.NoError(t, err)
	return out
}

func TestAllowedToolRuns(t *testing.T) {
	b := newBench(t, adaptertest.Wait, nil)
	out := b.agent(t, "Thought: add\nAction: calculator\nAction Input: 2+3", "Final Answer: five")
	assert.Equal(t, "five", out)
	require.Len(t, b.seen, 1)
	assert.Equal(t, tooluse.Ran, b.seen[0].State)
	assert.Equal(t, "5", b.seen[0].Text(), "the tool's text comes back as it was")
}

// TestApprovedWhileWaiting: the approver approves while the tool waits;
// the mail goes out once, with the gate's idempotency key.
func TestApprovedWhileWaiting(t *testing.T) {
	b := newBench(t, 10*time.Second, func(stepup.Call) (bool, bool) { return true, true })
	b.agent(t, "Thought: send\nAction: mailer\nAction Input: finance@example.com", "Final Answer: sent")
	require.Len(t, b.seen, 1)
	assert.Equal(t, tooluse.Ran, b.seen[0].State, b.seen[0].Text())
	assert.Equal(t, "sent to finance@example.com", b.seen[0].Text())
	assert.Equal(t, []string{"finance@example.com"}, b.mail.Sent())
	assert.NotEmpty(t, b.mail.keys[0])
}

func TestDeniedByTheApprover(t *testing.T) {
	b := newBench(t, 10*time.Second, func(stepup.Call) (bool, bool) { return false, true })
	b.agent(t, "Thought: send\nAction: mailer\nAction Input: finance@example.com", "Final Answer: not sent")
	require.Len(t, b.seen, 1)
	assert.Equal(t, tooluse.Denied, b.seen[0].State)
	assert.Contains(t, b.seen[0].Text(), "not to that address")
	assert.Empty(t, b.mail.Sent())
}

// TestSubstitutionAfterApproval: the approver approves the mail to
// finance, and the model, before the host resumes, asks again for
// another address. That is a new call for a person; resuming the
// approved ticket sends to finance only.
func TestSubstitutionAfterApproval(t *testing.T) {
	b := newBench(t, adaptertest.Wait, nil) // both calls come back pending
	b.toolSet = []tools.Tool{gated.Wrap(b.g, b.mail)}
	b.agent(t, "Action: mailer\nAction Input: finance@example.com",
		"Action: mailer\nAction Input: attacker@evil.example", "Final Answer: waiting")
	require.Len(t, b.seen, 2)
	assert.Equal(t, tooluse.Pending, b.seen[0].State)
	assert.Equal(t, tooluse.Pending, b.seen[1].State)
	_, err := b.h.Approve(b.seen[0].Ticket.ID)
	require.NoError(t, err)

	assert.Equal(t, tooluse.Ran, b.g.Resume(b.ctx, b.seen[0].Ticket.ID).State)
	assert.Equal(t, tooluse.Pending, b.g.Resume(b.ctx, b.seen[1].Ticket.ID).State)
	assert.Equal(t, []string{"finance@example.com"}, b.mail.Sent())
}

func TestNoScopeIsRefused(t *testing.T) {
	b := newBench(t, adaptertest.Wait, nil)
	out, err := b.toolSet[1].Call(context.Background(), "2+3")
	require.NoError(t, err)
	assert.Contains(t, out, "no scope")
	assert.Empty(t, b.seen)
}

func TestToolCallResponse(t *testing.T) {
	b := newBench(t, adaptertest.Wait, nil)
	resp, o := gated.ToolCallResponse(b.ctx, b.g, adaptertest.Scope(), llms.ToolCall{ID: "call_1", Type: "function",
		FunctionCall: &llms.FunctionCall{Name: "calculator", Arguments: `{"input":"6*7"}`}})
	assert.Equal(t, tooluse.Ran, o.State)
	assert.Equal(t, llms.ToolCallResponse{ToolCallID: "call_1", Name: "calculator", Content: "42"}, resp)

	resp, o = gated.ToolCallResponse(b.ctx, b.g, adaptertest.Scope(), llms.ToolCall{ID: "call_2"})
	assert.Equal(t, tooluse.Denied, o.State)
	assert.Equal(t, "call_2", resp.ToolCallID)
	assert.Contains(t, resp.Content, "names no function")
}

func TestExecutorRefusesOtherArguments(t *testing.T) {
	x := gated.Executor{Tool: &mailer{}}
	for _, args := range []string{`{}`, `{"input":5}`, `{"to":"a@example.com"}`, `[]`} {
		_, err := x.Execute(context.Background(), canon.Effect{Args: json.RawMessage(args)}, "k")
		assert.Error(t, err, args)
	}
	out, err := x.Execute(context.Background(), canon.Effect{Args: json.RawMessage(`{"input":"a@example.com"}`)}, "k")
	require.NoError(t, err)
	assert.Equal(t, `"sent to a@example.com"`, string(out))
}
