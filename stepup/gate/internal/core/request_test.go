package core

import (
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
		approve := NewRequest(plug.ActionApprove, "t", canon.Digest(d), nonce, at, canon.Digest(card), []string{"user:a"})
		deny := NewRequest(plug.ActionDeny, "t", canon.Digest(d), nonce, at, canon.Digest(card), []string{"user:a"})
		want := receipt.Challenge(canon.Digest(d), nonce, at.Unix(), canon.Digest(card))
		return approve.Challenge == want && deny.Challenge == receipt.DenyChallenge(want) &&
			deny.Challenge != approve.Challenge && approve.Action == plug.ActionApprove && deny.Action == plug.ActionDeny
	}
	require.NoError(t, quick.Check(prop, nil))
}
