package langchaingo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	gated "github.com/agentstepup/asu/adapters/langchaingo"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
)

// TestNilInputsAnswerWithoutPanic calls every exported function and the
// wrapped tool's methods with each combination of a nil or working gate,
// tool and context, and with zero tool calls and deferred calls: nothing
// panics, nothing runs through a nil gate or a nil tool, and an Executor
// without a tool refuses.
func TestNilInputsAnswerWithoutPanic(t *testing.T) {
	w := adaptertest.NewWorld(t)
	var noCtx context.Context
	var noTool tools.Tool
	for mask := range 1 << 3 {
		g, lt, ctx := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait}), tools.Tool(&mailer{}),
			tooluse.WithScope(context.Background(), adaptertest.Scope())
		if mask&1 != 0 {
			g = nil
		}
		if mask&2 != 0 {
			lt = noTool
		}
		if mask&4 != 0 {
			ctx = noCtx
		}
		name := fmt.Sprintf("nil gate %v, nil tool %v, nil ctx %v", mask&1 != 0, mask&2 != 0, mask&4 != 0)
		assert.NotPanics(t, func() {
			wt := gated.Wrap(g, lt)
			_, _ = wt.Name(), wt.Description()
			out, err := wt.Call(ctx, "finance@example.com")
			assert.NoError(t, err, name)
			assert.NotEmpty(t, out, name)
			for _, tc := range []llms.ToolCall{{}, {ID: "l1", FunctionCall: &llms.FunctionCall{Name: "write_draft", Arguments: `{"to":"a@example.com"}`}}} {
				_, o := gated.ToolCallResponse(ctx, g, adaptertest.Scope(), tc)
				assert.NotEmpty(t, o.Text(), name)
				if g == nil {
					assert.NotEqual(t, tooluse.Ran, o.State, name)
				}
			}
			for _, d := range []tooluse.Deferred{{}, {CallID: "l1", Tool: "send_email", Ticket: "nope"}} {
				_, o := gated.ResumeToolCallResponse(ctx, g, d)
				assert.NotEqual(t, tooluse.Ran, o.State, name)
			}
			for _, x := range []gated.Executor{{}, {Tool: noTool}} {
				_, err := x.Execute(ctx, canon.Effect{Args: []byte(`{"input":"x"}`)}, "k")
				assert.Error(t, err, name)
			}
			m := &mailer{}
			_, err = gated.Executor{Tool: m}.Execute(ctx, canon.Effect{Args: []byte(`{"input":"x"}`)}, "k")
			assert.NoError(t, err, name)
			assert.Equal(t, []string{"x"}, m.Sent(), name)
		}, name)
	}
}

// TestExecutorReadsOnlyTheExactInput: the Executor hands the tool the
// member named exactly "input", and refuses arguments in which another
// member's name differs from one only in letter case (every ASCII case
// variant of "input", and İ for i), or in which input is no string,
// without calling the tool.
func TestExecutorReadsOnlyTheExactInput(t *testing.T) {
	var refused []string
	for _, v := range caseVariants("input") {
		if v != "input" {
			refused = append(refused, `{"input":"ok",`+quote(v)+`:"evil"}`, `{`+quote(v)+`:"evil"}`)
		}
	}
	refused = append(refused, `{"input":"ok","\u0130nput":"evil"}`, `{"input":1}`, `{"input":null}`, `{}`, `[]`,
		`{"input":"ok","x":{"a":1,"A":2}}`)
	for _, args := range refused {
		m := &mailer{}
		_, err := gated.Executor{Tool: m}.Execute(context.Background(), canon.Effect{Args: []byte(args)}, "k")
		assert.Error(t, err, args)
		assert.Empty(t, m.Sent(), args)
	}
	m := &mailer{}
	_, err := gated.Executor{Tool: m}.Execute(context.Background(),
		canon.Effect{Args: []byte(`{"\u0131nput":"other","input":"ok","note":"x"}`)}, "k")
	assert.NoError(t, err)
	assert.Equal(t, []string{"ok"}, m.Sent())
}

func caseVariants(s string) []string {
	out := []string{""}
	for _, c := range s {
		var next []string
		for _, p := range out {
			next = append(next, p+string(c), p+string(c-'a'+'A'))
		}
		out = next
	}
	return out
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
