package tooluse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
)

// TestNilInputsRunNothing calls every exported function and method with
// each nil or zero pointer and interface argument, alone and together: a
// nil Gate, a zero one, one over no Runtime or over a nil *gate.Gate;
// a nil context; zero requests, scopes and deferred calls. Nothing
// panics, and a Gate without a Runtime denies every call with an error
// wrapping stepup.ErrConfig.
func TestNilInputsRunNothing(t *testing.T) {
	h, rec := world(t)
	var noCtx context.Context
	var nilGate *gate.Gate
	gates := map[string]*tooluse.Gate{
		"nil Gate":          nil,
		"zero Gate":         {},
		"no Runtime":        tooluse.New(nil, nil),
		"nil *gate.Gate":    tooluse.New(nilGate, &tooluse.Options{}),
		"working, no wait":  tooluse.New(h.Gate, &tooluse.Options{Wait: -1}),
		"working, defaults": tooluse.New(h.Gate, nil),
	}
	ctxs := map[string]context.Context{"nil ctx": noCtx, "ctx": context.Background()}
	reqs := map[string]tooluse.Request{"zero request": {},
		"request": {ID: "c1", Name: "write_draft", Args: json.RawMessage(`{"to":"a@example.com"}`)}}
	scopes := map[string]tooluse.Scope{"zero scope": {}, "scope": scope()}
	deferreds := map[string]tooluse.Deferred{"zero deferred": {}, "deferred": {CallID: "c1", Tool: "send_email", Ticket: "nope"}}

	ran := 0
	for gn, g := range gates {
		working := gn == "working, no wait" || gn == "working, defaults"
		for cn, ctx := range ctxs {
			check := func(what string, f func() tooluse.Outcome) {
				name := fmt.Sprintf("%s(%s, %s)", what, gn, cn)
				var o tooluse.Outcome
				if !assert.NotPanics(t, func() { o = f() }, name) {
					return
				}
				assert.NotEmpty(t, o.Text(), name)
				if o.State == tooluse.Ran {
					ran++
				}
				if !working {
					assert.Equal(t, tooluse.Denied, o.State, name)
					assert.ErrorIs(t, o.Err, stepup.ErrConfig, name)
				}
			}
			for rn, r := range reqs {
				for sn, s := range scopes {
					check("Run "+rn+" "+sn, func() tooluse.Outcome { return g.Run(ctx, s, r) })
					check("Propose "+rn+" "+sn, func() tooluse.Outcome { return g.Propose(ctx, s, r) })
				}
			}
			for dn, d := range deferreds {
				check("ResumeDeferred "+dn, func() tooluse.Outcome { return g.ResumeDeferred(ctx, d) })
				check("Resume "+dn, func() tooluse.Outcome { return g.Resume(ctx, d.Ticket) })
			}
			assert.NotPanics(t, func() {
				c := tooluse.WithScope(ctx, scope())
				_, ok := tooluse.ScopeFrom(c)
				assert.True(t, ok)
				c = tooluse.WithIdempotencyKey(ctx, "k")
				k, ok := tooluse.IdempotencyKey(c)
				assert.True(t, ok)
				assert.Equal(t, "k", k)
				_, ok = tooluse.ScopeFrom(ctx)
				assert.False(t, ok)
				_, ok = tooluse.IdempotencyKey(ctx)
				assert.False(t, ok)
			}, cn)
		}
	}
	assert.NotPanics(t, func() {
		for _, r := range reqs {
			_ = tooluse.Unscoped(r).Text()
			_ = scope().Call(r)
		}
		_, _ = tooluse.Outcome{}.Deferred()
	})
	assert.Equal(t, 4, ran, "the working gates ran the allowed call with a scope, with and without a context")
	assert.Equal(t, ran, rec.Count())
}
