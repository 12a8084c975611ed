package core

import (
	"bytes"
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

// TestLowSIsOneForBothSignatures: (r, s) and (r, n-s) read the same, and
// a signature that is not P-256 DER is kept as it is.
func TestLowSIsOneForBothSignatures(t *testing.T) {
	// r = 1, s = 1 and s = n-1.
	low := []byte{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01}
	nMinus1 := append([]byte{0x02, 0x21, 0x00}, p256Order.Bytes()...)
	nMinus1[len(nMinus1)-1]--
	high := append([]byte{0x30, byte(3 + len(nMinus1)), 0x02, 0x01, 0x01}, nMinus1...)
	if !bytes.Equal(lowS(low), lowS(high)) {
		t.Fatalf("(r, s) and (r, n-s) differ: %x %x", lowS(low), lowS(high))
	}
	for _, sig := range [][]byte{nil, {0x30}, []byte("ed25519 signature bytes"), append(bytes.Clone(low), 0)} {
		if !bytes.Equal(lowS(sig), sig) {
			t.Fatalf("%x was changed", sig)
		}
	}
}
