package card

import (
	"crypto/sha256"
	"fmt"

	"github.com/agentstepup/asu/canon"
)

// HashTag separates card hashes from every other SHA-256 in asu.
const HashTag = "asu/v1/card"

// HashLimits returns the limits for canonicalizing card JSON. A card nests
// about three levels per level of the effect's arguments and escapes and
// repeats long values, so it outgrows canon's default limits for effects
// those limits accept; a verifier recomputing card hashes should allow at
// least this much.
func HashLimits() canon.Limits {
	return canon.Limits{MaxBytes: 16 << 20, MaxDepth: 4*canon.DefaultMaxDepth + 8}
}

// HashJSON returns the card hash of card JSON as [Card.JSON] emits it:
// SHA-256(HashTag ‖ 0x00 ‖ JCS(cardJSON)). It canonicalizes its input first,
// so whitespace or key order in a stored copy do not matter.
func HashJSON(cardJSON []byte) (canon.Digest, error) {
	c, err := HashLimits().Canonicalize(cardJSON)
	if err != nil {
		return canon.Digest{}, fmt.Errorf("card json: %w", err)
	}
	return hashCanonical(c), nil
}

func hashCanonical(c []byte) canon.Digest {
	h := sha256.New()
	h.Write([]byte(HashTag))
	h.Write([]byte{0})
	h.Write(c)
	var d canon.Digest
	h.Sum(d[:0])
	return d
}
