package plug_test

import (
	"context"
	"testing"
	"testing/quick"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/plug"
)

// TestNewRequestChallenges: a request's challenge is receipt's approve
// challenge over exactly the ticket's digest, nonce, expiry and card hash,
// and the deny challenge of the same ticket is a different value, so an
// answer to one never answers the other.
func TestNewRequestChallenges(t *testing.T) {
	prop := func(d, card [32]byte, nonce [32]byte, exp uint32) bool {
		at := time.Unix(int64(exp), 0)
		approve := plug.NewRequest(plug.ActionApprove, "t", canon.Digest(d), nonce, at, canon.Digest(card), []string{"user:a"})
		deny := plug.NewRequest(plug.ActionDeny, "t", canon.Digest(d), nonce, at, canon.Digest(card), []string{"user:a"})
		want := receipt.Challenge(canon.Digest(d), nonce, at.Unix(), canon.Digest(card))
		return approve.Challenge == want && deny.Challenge == receipt.DenyChallenge(want) &&
			deny.Challenge != approve.Challenge && approve.Action == plug.ActionApprove && deny.Action == plug.ActionDeny
	}
	require.NoError(t, quick.Check(prop, nil))
}

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
