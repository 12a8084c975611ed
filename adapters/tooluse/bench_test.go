package tooluse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentstepup/asu/adapters/tooluse"
)

// BenchmarkRun measures a call the policy allows through the tooluse core
// against the same call through the gate's own Propose and Execute (the
// baseline, in the same run): the difference is the core's cost, one Wait
// on a decided ticket and the outcome's text.
func BenchmarkRun(b *testing.B) {
	for _, size := range []int{16, 4096} {
		args := json.RawMessage(fmt.Sprintf(`{"to":"a@example.com","body":%q}`, strings.Repeat("a", size)))
		b.Run(fmt.Sprintf("gate/body=%d", size), func(b *testing.B) {
			h, _ := world(b)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				c := scope().Call(tooluse.Request{ID: fmt.Sprint(i), Name: "write_draft", Args: args})
				tk, err := h.Gate.Propose(ctx, c)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := h.Gate.Execute(ctx, tk.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("tooluse/body=%d", size), func(b *testing.B) {
			h, _ := world(b)
			g := tooluse.New(h.Gate, nil)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				o := g.Run(ctx, scope(), tooluse.Request{ID: fmt.Sprint(i), Name: "write_draft", Args: args})
				if o.State != tooluse.Ran {
					b.Fatal(o.Text())
				}
				_ = o.Text()
			}
		})
	}
}
