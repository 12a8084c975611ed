package plug_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/plug"
)

// TestReservedTool: the gate's own tools are exactly the names with its
// prefix.
func TestReservedTool(t *testing.T) {
	require.True(t, plug.ReservedTool(plug.GrantTool))
	require.True(t, plug.ReservedTool(plug.ReservedToolPrefix+"anything"))
	for _, tool := range []string{"", "asu", "send_email", "ASU.grant", " asu.grant", "x.asu.grant"} {
		require.False(t, plug.ReservedTool(tool), tool)
	}
}

// TestExecutorFunc: the adapter calls the function with what it was given.
func TestExecutorFunc(t *testing.T) {
	var got string
	var e plug.Executor = plug.ExecutorFunc(func(_ context.Context, eff canon.Effect, key string) ([]byte, error) {
		got = eff.Tool + "/" + key
		return []byte(`{}`), nil
	})
	out, err := e.Execute(t.Context(), canon.Effect{Tool: "send_email"}, "k-1")
	require.NoError(t, err)
	require.Equal(t, `{}`, string(out))
	require.Equal(t, "send_email/k-1", got)
}
