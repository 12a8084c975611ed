package receipt_test

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"math/big"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
)

// smallOrderKeys are the canonical encodings of Ed25519's eight points of
// small order: each y of smallOrderYs with an x of either sign, but y = 1
// and y = p-1, whose x is zero and takes no sign.
func smallOrderKeys(t *testing.T) [][]byte {
	t.Helper()
	var keys [][]byte
	for _, y := range []string{
		"0100000000000000000000000000000000000000000000000000000000000000",
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"0000000000000000000000000000000000000000000000000000000000000000",
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	} {
		b, err := hex.DecodeString(y)
		require.NoError(t, err)
		keys = append(keys, b)
		if y[:2] != "01" && y[:2] != "ec" {
			neg := append([]byte(nil), b...)
			neg[31] |= 0x80
			keys = append(keys, neg)
		}
	}
	require.Len(t, keys, 8)
	return keys
}

// forge signs msg for key with no private key: R = [a]B for a scalar a
// of its own and S = a mod L, which crypto/ed25519 accepts whenever
// [k]A is the identity, k the message's hash.
func forge(seed byte, msg []byte) []byte {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	r := ed25519.NewKeyFromSeed(s).Public().(ed25519.PublicKey)
	h := sha512.Sum512(s)
	h[0] &= 248
	h[31] &= 127
	h[31] |= 64
	a := new(big.Int).SetBytes(reverse(h[:32]))
	l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	sb := make([]byte, 32)
	new(big.Int).Mod(a, l).FillBytes(sb)
	return append(append([]byte(nil), r...), reverse(sb)...)
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}

// TestSmallOrderEd25519KeysRefused: under an Ed25519 key of small order
// anyone signs (crypto/ed25519 itself accepts a signature made without a
// private key, shown here for each of the eight), so such a key proves no
// approval: receipt refuses it as a COSE_Key and as a crypto key, and
// takes every key ed25519.GenerateKey makes.
func TestSmallOrderEd25519KeysRefused(t *testing.T) {
	for _, key := range smallOrderKeys(t) {
		forged := false
		for i := range 256 {
			msg := fmt.Appendf(nil, "approve payment %d", i)
			if ed25519.Verify(ed25519.PublicKey(key), msg, forge(byte(i), msg)) {
				forged = true
				break
			}
		}
		assert.True(t, forged, "no signature forged under %x: not a key of small order", key)
		for _, alg := range []int64{int64(webauthncose.AlgEdDSA), int64(webauthncose.AlgEd25519)} {
			_, err := receipt.ParseCOSEKey(encodeCOSE(coseEntry{1, int64(1)}, coseEntry{3, alg}, coseEntry{-1, int64(6)}, coseEntry{-2, key}))
			assert.ErrorIs(t, err, receipt.ErrUnsupportedKey, "%x", key)
		}
		_, err := receipt.NewTrustedKey(ed25519.PublicKey(key))
		assert.ErrorIs(t, err, receipt.ErrUnsupportedKey, "%x", key)
	}
	for range 256 {
		pub, _, err := ed25519.GenerateKey(nil)
		require.NoError(t, err)
		_, err = receipt.NewTrustedKey(pub)
		require.NoError(t, err, "%x", pub)
		for i := range 4 {
			msg := fmt.Appendf(nil, "approve payment %d", i)
			assert.False(t, ed25519.Verify(pub, msg, forge(byte(i), msg)), "forged under a generated key")
		}
	}
}
