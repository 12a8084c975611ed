package core

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// goroutineID is the number runtime.Stack gives the calling goroutine.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestOwnPluginsRunOnTheCallersGoroutine: a call of one of asu's own
// plug-ins runs where it is made; any other plug-in's runs on a goroutine
// of its own, so that the gate can stop waiting for it.
func TestOwnPluginsRunOnTheCallersGoroutine(t *testing.T) {
	var g Gate
	for _, own := range []bool{true, false} {
		ran, err := contain(context.Background(), &g, own, PluginPolicy, time.Second, func(context.Context) (string, error) {
			return goroutineID(), nil
		})
		require.NoError(t, err)
		assert.Equal(t, own, ran == goroutineID(), "own=%v", own)
	}
}

// panicsKey is a non-empty string, to index an empty slice with.
var panicsKey = "x"

// TestOwnPluginsAreContained: whether a plug-in runs on the caller's
// goroutine or its own, every panic (nil, a value, a runtime error) is a
// misbehaviour and an answer after the deadline is discarded.
func TestOwnPluginsAreContained(t *testing.T) {
	var g Gate
	panics := map[string]func(){
		"value":         func() { panic("boom") },
		"nil":           func() { panic(nil) },
		"runtime error": func() { _ = []int{}[len(panicsKey)] },
		"error":         func() { panic(errors.New("boom")) },
	}
	for _, own := range []bool{true, false} {
		for name, p := range panics {
			v, err := contain(context.Background(), &g, own, PluginRenderer, time.Second, func(context.Context) (string, error) {
				p()
				return "decided", nil
			})
			assert.ErrorIs(t, err, ErrMisbehaved, "own=%v %s", own, name)
			assert.Equal(t, "renderer panicked or exited", Misbehaviour(err), "own=%v %s", own, name)
			assert.Empty(t, v)
		}
		// An answer given once the deadline passed is not used, whatever
		// it says.
		v, err := contain(context.Background(), &g, own, PluginFlood, 20*time.Millisecond, func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "admitted", nil
		})
		assert.ErrorIs(t, err, ErrMisbehaved, "own=%v", own)
		assert.Empty(t, v)
		// An error given in time is the plug-in's own.
		_, err = contain(context.Background(), &g, own, PluginFlood, time.Second, func(context.Context) (string, error) {
			return "", flood.ErrRateLimited
		})
		assert.ErrorIs(t, err, flood.ErrRateLimited)
		assert.NotErrorIs(t, err, ErrMisbehaved)
	}
}

// catalogOfMine is a plug-in of somebody else's that embeds one of asu's
// own: what it adds is not asu's, so it is not own.
type catalogOfMine struct{ *policy.Catalog }

func (catalogOfMine) Decide(context.Context, plug.Proposal) (plug.Decision, error) {
	select {} // ignores its context
}

// TestOwnIsAsusTypesOnly: Own names asu's own plug-in types, and no type
// that wraps or embeds one.
func TestOwnIsAsusTypesOnly(t *testing.T) {
	cat, err := policy.NewCatalog("v1")
	require.NoError(t, err)
	for _, p := range []any{cat, &passkey.Approver{}, card.Renderer{}, &card.Renderer{}, &flood.Limiter{}, StoreGrants{}} {
		assert.True(t, Own(p), "%T", p)
	}
	for _, p := range []any{nil, catalogOfMine{cat}, &catalogOfMine{cat}, policy.Catalog{}, struct{ card.Renderer }{}, plug.ExecutorFunc(nil)} {
		assert.False(t, Own(p), "%T", p)
	}
}
