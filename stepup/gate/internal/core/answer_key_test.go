package core

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"math/big"
	"testing"
)

// FuzzAnswerKey reads any bytes as an answer: no panic, the same key for
// the same bytes, and a key of its own for each mark's kind and ticket.
func FuzzAnswerKey(f *testing.F) {
	f.Add([]byte(`{"rawId":"AQ","response":{"authenticatorData":"Ag","clientDataJSON":"Aw","signature":"MAYCAQECAQE"}}`))
	f.Add([]byte(`{"rawId":"AQ==","response":{"authenticatorData":"Ag==","clientDataJSON":"Aw","signature":"BA"}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, answer []byte) {
		k := answerKey("asu/early\x00", "t1", answer)
		if k != answerKey("asu/early\x00", "t1", bytes.Clone(answer)) {
			t.Fatal("two keys for the same bytes")
		}
		if k == answerKey("asu/refused\x00", "t1", answer) || k == answerKey("asu/early\x00", "t2", answer) {
			t.Fatal("a key shared across kinds or tickets")
		}
		if parts := answerContent(answer); parts != nil && len(parts) != 4 {
			t.Fatalf("%d parts", len(parts))
		}
	})
}

// TestSignatureIDIsOneForEverySpelling: on every curve enrolment
// accepts, a signature (r, s) and its respelling (r, n-s), each low or
// high, read as one; a DER variant no verifier accepts (a long-form
// length, an integer padded with a zero, a byte after it) is kept as it
// is, and so is a signature that is not DER (Ed25519, RSA).
func TestSignatureIDIsOneForEverySpelling(t *testing.T) {
	for _, curve := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		t.Run(curve.Params().Name, func(t *testing.T) {
			key, err := ecdsa.GenerateKey(curve, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			n := curve.Params().N
			for i := range 32 {
				digest := sha256.Sum256([]byte{byte(i)})
				sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
				if err != nil {
					t.Fatal(err)
				}
				var rs struct{ R, S *big.Int }
				if _, err := asn1.Unmarshal(sig, &rs); err != nil {
					t.Fatal(err)
				}
				flipped, err := asn1.Marshal(struct{ R, S *big.Int }{rs.R, new(big.Int).Sub(n, rs.S)})
				if err != nil {
					t.Fatal(err)
				}
				if !ecdsa.VerifyASN1(&key.PublicKey, digest[:], flipped) {
					t.Fatal("the respelling does not verify: the test is wrong")
				}
				if !bytes.Equal(signatureID(sig), signatureID(flipped)) {
					t.Fatalf("(r, s) and (r, n-s) read apart: %x %x", sig, flipped)
				}
				other, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(signatureID(sig), signatureID(other)) {
					t.Fatal("signing again reads as the same signature")
				}
				for name, variant := range derVariants(sig) {
					if ecdsa.VerifyASN1(&key.PublicKey, digest[:], variant) {
						continue // a spelling the verifier takes must read as one: checked above
					}
					if !bytes.Equal(signatureID(variant), variant) {
						t.Fatalf("%s: a spelling no verifier takes was read as a signature", name)
					}
				}
			}
		})
	}
	for _, sig := range [][]byte{nil, {0x30}, []byte("ed25519 signature bytes"), make([]byte, 256)} {
		if !bytes.Equal(signatureID(sig), sig) {
			t.Fatalf("%x was changed", sig)
		}
	}
}

// derVariants are spellings of DER signature sig that decode to the same
// integers under a lax reader.
func derVariants(sig []byte) map[string][]byte {
	var rs struct{ R, S *big.Int }
	_, _ = asn1.Unmarshal(sig, &rs)
	padded := func(b *big.Int) []byte {
		v := append([]byte{0x00, 0x00}, b.Bytes()...)
		return append([]byte{0x02, byte(len(v))}, v...)
	}
	body := append(padded(rs.R), padded(rs.S)...)
	long := append([]byte{0x30, 0x81, byte(len(sig) - 2)}, sig[2:]...)
	if sig[1] == 0x81 {
		long = append([]byte{0x30, 0x82, 0x00, sig[2]}, sig[3:]...)
	}
	return map[string][]byte{
		"trailing byte":    append(bytes.Clone(sig), 0x00),
		"long-form length": long,
		"padded integers":  append([]byte{0x30, 0x81, byte(len(body))}, body...),
	}
}
