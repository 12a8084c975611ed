package receipt_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
)

// TestECDSAKeyIsTakenOnlyOnItsOwnCurve: an ECDSA COSE_Key is trusted only
// under the algorithm WebAuthn pairs with its curve (ES256 with P-256,
// ES384 with P-384, ES512 with P-521), whatever coordinates it carries;
// any other label and curve pair is refused, so no key is taken under two
// hashes. NewTrustedKey labels each curve's key with its pair.
func TestECDSAKeyIsTakenOnlyOnItsOwnCurve(t *testing.T) {
	curves := []struct {
		curve elliptic.Curve
		crv   int64
		alg   int64
		name  string
	}{
		{elliptic.P256(), 1, -7, "ES256"},
		{elliptic.P384(), 2, -35, "ES384"},
		{elliptic.P521(), 3, -36, "ES512"},
	}
	for _, key := range curves {
		k, err := ecdsa.GenerateKey(key.curve, rand.Reader)
		require.NoError(t, err)
		raw, err := k.PublicKey.Bytes()
		require.NoError(t, err)
		size := (len(raw) - 1) / 2
		x, y := raw[1:1+size], raw[1+size:]

		trusted, err := receipt.NewTrustedKey(&k.PublicKey)
		require.NoError(t, err, key.name)
		assert.Equal(t, key.name, trusted.Algorithm())

		for _, label := range curves {
			for _, crv := range curves {
				name := fmt.Sprintf("%s key labelled alg %d crv %d", key.name, label.alg, crv.crv)
				cose := encodeCOSE(coseEntry{1, int64(2)}, coseEntry{3, label.alg}, coseEntry{-1, crv.crv},
					coseEntry{-2, x}, coseEntry{-3, y})
				got, err := receipt.ParseCOSEKey(cose)
				if label == key && crv == key {
					require.NoError(t, err, name)
					assert.Equal(t, key.name, got.Algorithm(), name)
					continue
				}
				assert.ErrorIs(t, err, receipt.ErrUnsupportedKey, name)
			}
		}
	}
}
