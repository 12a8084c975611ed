package eino_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/stretchr/testify/assert"

	einoadapter "github.com/agentstepup/asu/adapters/eino"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
)

// TestNilInputsAnswerWithoutPanic calls every exported function and the
// wrapped tool's methods with each combination of a nil or working gate,
// tool and context, and with nil errors and a nil *Waiting: nothing
// panics, a wrapped nil tool has no Info and runs nothing, and an
// Executor without a tool refuses.
func TestNilInputsAnswerWithoutPanic(t *testing.T) {
	w := adaptertest.NewWorld(t)
	var noCtx context.Context
	var noTool tool.BaseTool
	for mask := range 1 << 3 {
		g, bt, ctx := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait}), tool.BaseTool(infoTool("write_draft")),
			tooluse.WithScope(context.Background(), adaptertest.Scope())
		if mask&1 != 0 {
			g = nil
		}
		if mask&2 != 0 {
			bt = noTool
		}
		if mask&4 != 0 {
			ctx = noCtx
		}
		name := fmt.Sprintf("nil gate %v, nil tool %v, nil ctx %v", mask&1 != 0, mask&2 != 0, mask&4 != 0)
		assert.NotPanics(t, func() {
			wt := einoadapter.Wrap(g, bt)
			info, err := wt.Info(ctx)
			assert.Equal(t, bt == nil, err != nil, name)
			assert.Equal(t, bt == nil, info == nil, name)
			out, err := wt.InvokableRun(ctx, `{"to":"a@example.com"}`)
			if bt == nil {
				assert.Error(t, err, name)
			} else {
				assert.NotEmpty(t, out, name)
			}
		}, name)
	}
	before := w.Rec.Count()
	assert.NotPanics(t, func() {
		assert.Nil(t, einoadapter.Pending(nil))
		_, ok := einoadapter.InterruptID(nil, "tk")
		assert.False(t, ok)
		var none *einoadapter.Waiting
		assert.NotEmpty(t, none.String())
		_ = (&einoadapter.Waiting{}).String()
		for _, x := range []einoadapter.Executor{{}, {Tool: nil}} {
			for _, ctx := range []context.Context{noCtx, context.Background()} {
				_, err := x.Execute(ctx, canon.Effect{Args: []byte(`{}`)}, "k")
				assert.Error(t, err)
			}
		}
		var got string
		echo := echoTool{infoTool: "echo", f: func(ctx context.Context, args string) (string, error) {
			got, _ = tooluse.IdempotencyKey(ctx)
			return "ok", nil
		}}
		_, err := einoadapter.Executor{Tool: echo}.Execute(noCtx, canon.Effect{Args: []byte(`{}`)}, "key-1")
		assert.NoError(t, err)
		assert.Equal(t, "key-1", got)
		_, err = einoadapter.Executor{Tool: echo}.Execute(context.Background(), canon.Effect{}, "k")
		assert.Error(t, err, "no arguments is no object")
	})
	assert.Equal(t, before, w.Rec.Count())
}
