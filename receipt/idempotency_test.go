package receipt_test

import (
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
)

func TestIdempotencyKeyIsAFunctionOfTheApproval(t *testing.T) {
	seen := map[string]string{}
	for i := range 2000 {
		var nonce [32]byte
		_, err := rand.Read(nonce[:])
		require.NoError(t, err)
		ticket := fmt.Sprintf("t-%d", i%50)
		k := receipt.IdempotencyKey(ticket, nonce)
		assert.Equal(t, k, receipt.IdempotencyKey(ticket, nonce), "the same approval gives the same key")
		assert.Len(t, k, len("asu1-")+64)
		prev, dup := seen[k]
		assert.False(t, dup, "two approvals share key %s (%s)", k, prev)
		seen[k] = ticket
	}
}

// The ticket id is length-prefixed: moving bytes between the id and the
// nonce never gives the same key.
func TestIdempotencyKeySeparatesTicketFromNonce(t *testing.T) {
	var n1, n2 [32]byte
	n1[0], n2[0] = 'b', 'c'
	assert.NotEqual(t, receipt.IdempotencyKey("a", n1), receipt.IdempotencyKey("ab", n2))
	assert.NotEqual(t, receipt.IdempotencyKey("a", n1), receipt.IdempotencyKey("a", n2))
	assert.NotEqual(t, receipt.IdempotencyKey("a", n1), receipt.IdempotencyKey("b", n1))
}

func ExampleIdempotencyKey() {
	var nonce [32]byte // the ticket's nonce, from its receipt or audit row
	fmt.Println(receipt.IdempotencyKey("tk-1", nonce))
	// Output: asu1-1a43433e824a9d54d75df3aac2e70a87394ffc2019114e65710026951b1f2d72
}
