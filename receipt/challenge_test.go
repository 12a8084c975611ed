package receipt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
)

// TestDenyChallengeFormula recomputes the deny challenge from its written
// formula, pins one vector, and checks over random tickets that a deny
// challenge never equals the approve challenge it derives from, nor the
// deny challenge of another ticket.
func TestDenyChallengeFormula(t *testing.T) {
	var approve [32]byte
	for i := range approve {
		approve[i] = byte(i)
	}
	want := sha256.Sum256(append([]byte("asu/v1/deny\x00"), approve[:]...))
	assert.Equal(t, want, receipt.DenyChallenge(approve))
	assert.Equal(t, "asu/v1/deny", receipt.DenyTag)

	r := rand.New(rand.NewPCG(7, 8))
	seen := map[[32]byte]bool{}
	for range 2000 {
		var d, card canon.Digest
		var nonce [32]byte
		for i := range 32 {
			d[i], card[i], nonce[i] = byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())
		}
		a := receipt.Challenge(d, nonce, r.Int64N(1<<40), card)
		deny := receipt.DenyChallenge(a)
		assert.NotEqual(t, a, deny)
		assert.False(t, seen[a] || seen[deny], "a challenge repeats")
		seen[a], seen[deny] = true, true
	}
}

func ExampleDenyChallenge() {
	var approve [32]byte // receipt.Challenge of the ticket
	deny := receipt.DenyChallenge(approve)
	fmt.Println(hex.EncodeToString(deny[:4]), deny != approve)
	// Output: 358ff41c true
}
