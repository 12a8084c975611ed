package receipt_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// coseEntry is one member of a COSE_Key map: an integer label and an
// integer or byte string value.
type coseEntry struct {
	label int64
	value any // int64 or []byte
}

// encodeCOSE writes entries as a CBOR map in the order given, as any
// authenticator may (CTAP2's canonical order is only one of them).
func encodeCOSE(entries ...coseEntry) []byte {
	head := func(b []byte, major byte, n uint64) []byte {
		switch {
		case n < 24:
			return append(b, major<<5|byte(n))
		case n < 1<<8:
			return append(b, major<<5|24, byte(n))
		case n < 1<<16:
			return append(b, major<<5|25, byte(n>>8), byte(n))
		}
		return append(b, major<<5|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	integer := func(b []byte, v int64) []byte {
		if v < 0 {
			return head(b, 1, uint64(-1-v))
		}
		return head(b, 0, uint64(v))
	}
	out := head(nil, 5, uint64(len(entries)))
	for _, e := range entries {
		out = integer(out, e.label)
		switch v := e.value.(type) {
		case int64:
			out = integer(out, v)
		case []byte:
			out = append(head(out, 2, uint64(len(v))), v...)
		}
	}
	return out
}

// keySpelling is one way a verifier may be given a key.
type keySpelling struct {
	name string
	key  func(t *testing.T) *receipt.TrustedKey
}

func fromCOSE(cose []byte) func(t *testing.T) *receipt.TrustedKey {
	return func(t *testing.T) *receipt.TrustedKey {
		k, err := receipt.ParseCOSEKey(cose)
		require.NoError(t, err)
		return k
	}
}

// spellings returns the encodings of s's one public key that receipt
// accepts: its COSE_Key as the signer wrote it, in another map order,
// with an extra key ID, under the other algorithm label (Ed25519), with
// leading zeros (RSA), with another exponent (RSA: the same modulus, the
// same holder), and as a crypto.PublicKey (a PEM file).
func spellings(t *testing.T, s *receipttest.Signer) []keySpelling {
	parsed, err := webauthncose.ParsePublicKey(s.COSEKey())
	require.NoError(t, err)
	var kinds [][]coseEntry
	switch k := parsed.(type) {
	case webauthncose.OKPPublicKeyData:
		for _, alg := range []int64{int64(webauthncose.AlgEdDSA), int64(webauthncose.AlgEd25519)} {
			kinds = append(kinds, []coseEntry{{1, int64(1)}, {3, alg}, {-1, int64(6)}, {-2, k.XCoord}})
		}
	case webauthncose.EC2PublicKeyData:
		kinds = append(kinds, []coseEntry{{1, int64(2)}, {3, k.Algorithm}, {-1, k.Curve}, {-2, k.XCoord}, {-3, k.YCoord}})
	case webauthncose.RSAPublicKeyData:
		kinds = append(kinds,
			[]coseEntry{{1, int64(3)}, {3, int64(-257)}, {-1, k.Modulus}, {-2, k.Exponent}},
			[]coseEntry{{1, int64(3)}, {3, int64(-257)}, {-1, append([]byte{0}, k.Modulus...)}, {-2, append([]byte{0, 0}, k.Exponent...)}},
			[]coseEntry{{1, int64(3)}, {3, int64(-257)}, {-1, k.Modulus}, {-2, big.NewInt(3).Bytes()}})
	}
	out := []keySpelling{
		{"as enrolled", fromCOSE(s.COSEKey())},
		{"crypto key", func(t *testing.T) *receipt.TrustedKey {
			k, err := receipt.NewTrustedKey(s.PublicKey())
			require.NoError(t, err)
			return k
		}},
	}
	for i, entries := range kinds {
		reversed := make([]coseEntry, len(entries))
		for j, e := range entries {
			reversed[len(entries)-1-j] = e
		}
		withKid := append(append([]coseEntry(nil), entries...), coseEntry{2, []byte("kid-1")})
		for name, cose := range map[string][]byte{"cose": encodeCOSE(entries...), "cose reversed": encodeCOSE(reversed...),
			"cose with kid": encodeCOSE(withKid...)} {
			if _, err := receipt.ParseCOSEKey(cose); err != nil {
				continue // a spelling receipt refuses is no spelling of the key
			}
			out = append(out, keySpelling{name + " " + string(rune('a'+i)), fromCOSE(cose)})
		}
	}
	return out
}

// TestOneKeyIsOnePersonHoweverSpelt: a verifier given one public key for
// two people, in any two of the spellings receipt accepts (COSE map order,
// extra members, EdDSA or Ed25519 label, RSA leading zeros or another
// exponent, a COSE_Key or a PEM key), refuses the quorum as a bad policy:
// otherwise one passkey assertion, copied into a second receipt that names
// the second person and embeds the second spelling, would count as two
// approvers. Distinct keys are no such policy.
func TestOneKeyIsOnePersonHoweverSpelt(t *testing.T) {
	for _, alg := range receipttest.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s := newSigner(t, alg)
			q := quorumOf(t, s)
			sp := spellings(t, s)
			require.GreaterOrEqual(t, len(sp), 3)
			for _, a := range sp {
				for _, b := range sp {
					copied := *q.Receipts[0]
					copied.Approver.User = "user:bob"
					two := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 2, Receipts: []*receipt.Receipt{q.Receipts[0], &copied}}
					people := []receipt.Person{{User: s.User(), Keys: []*receipt.TrustedKey{a.key(t)}},
						{User: "user:bob", Keys: []*receipt.TrustedKey{b.key(t)}}}
					_, err := receipt.VerifyQuorum(two, people, 2, s.Policy())
					assert.ErrorIs(t, err, receipt.ErrPolicy, "%s and %s", a.name, b.name)
				}
			}
			other, err := receipttest.New(alg, "user:erin")
			require.NoError(t, err)
			people := []receipt.Person{person(s), person(other)}
			_, err = receipt.VerifyQuorum(quorumOf(t, s, other), people, 2, s.Policy())
			assert.NoError(t, err, "two keys, two people")
		})
	}
}

// TestCryptoKeyMatchesEitherEd25519Label: an Ed25519 key given as a
// crypto.PublicKey (a PEM file) is the key of a receipt that embeds it
// under either COSE label, EdDSA (-8) or Ed25519 (-19): one algorithm.
func TestCryptoKeyMatchesEitherEd25519Label(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	pub := s.PublicKey().(ed25519.PublicKey)
	trusted, err := receipt.NewTrustedKey(pub)
	require.NoError(t, err)
	for _, alg := range []int64{int64(webauthncose.AlgEdDSA), int64(webauthncose.AlgEd25519)} {
		r := sign(t, s)
		r.Approver.PublicKey = encodeCOSE(coseEntry{1, int64(1)}, coseEntry{3, alg}, coseEntry{-1, int64(6)}, coseEntry{-2, []byte(pub)})
		_, err := receipt.Verify(r, trusted, s.Policy())
		assert.NoError(t, err, "alg %d", alg)
	}
}

// edEncoding returns the 32-byte little-endian Ed25519 encoding of y with
// the sign bit of x set as given.
func edEncoding(y *big.Int, sign bool) []byte {
	b := make([]byte, 32)
	y.FillBytes(b)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	if sign {
		b[31] |= 0x80
	}
	return b
}

// TestNonCanonicalEd25519KeysRefused: an Ed25519 public key written with
// a y at or above the field prime, or with the sign bit on an x of zero,
// names a point another 32 bytes name too, so one key could be enrolled
// for two people in different bytes; receipt refuses those encodings,
// given as a COSE_Key or as a crypto key, and takes the canonical ones.
func TestNonCanonicalEd25519KeysRefused(t *testing.T) {
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	var bad [][]byte
	for y := int64(0); y < 19; y++ {
		v := new(big.Int).Add(p, big.NewInt(y))
		bad = append(bad, edEncoding(v, false), edEncoding(v, true))
	}
	bad = append(bad, edEncoding(big.NewInt(1), true), edEncoding(new(big.Int).Sub(p, big.NewInt(1)), true))
	for _, x := range bad {
		for _, alg := range []int64{int64(webauthncose.AlgEdDSA), int64(webauthncose.AlgEd25519)} {
			_, err := receipt.ParseCOSEKey(encodeCOSE(coseEntry{1, int64(1)}, coseEntry{3, alg}, coseEntry{-1, int64(6)}, coseEntry{-2, x}))
			assert.ErrorIs(t, err, receipt.ErrUnsupportedKey, "%x", x)
		}
		_, err := receipt.NewTrustedKey(ed25519.PublicKey(x))
		assert.ErrorIs(t, err, receipt.ErrUnsupportedKey, "%x", x)
	}
	// y = 1 and y = p-1 with no sign are canonical but of small order,
	// refused for that (TestSmallOrderEd25519KeysRefused).
	good := [][]byte{edEncoding(new(big.Int).Sub(p, big.NewInt(2)), true)}
	for range 64 {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(t, err)
		good = append(good, pub)
	}
	for _, x := range good {
		_, err := receipt.NewTrustedKey(ed25519.PublicKey(x))
		assert.NoError(t, err, "%x", x)
	}
}
