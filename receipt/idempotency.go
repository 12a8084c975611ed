package receipt

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// IdempotencyTag separates idempotency keys from every other hash asu
// makes.
const IdempotencyTag = "asu/v1/idempotency"

// IdempotencyKey returns the idempotency key every run of an approval
// carries to its executor:
//
//	"asu1-" ‖ hex(SHA-256("asu/v1/idempotency" ‖ 0x00 ‖ uint32be(len(ticket)) ‖ ticket ‖ nonce[32]))
//
// It is a function of the approval (the ticket and its single-use nonce),
// never of the attempt, so a re-run after a crash, a run on another
// replica and a run after the store was restored from a backup all carry
// the same key, and a tool that has seen the key before knows it is the
// same effect and must not repeat it. The key identifies an approval; it
// does not authorize one: anyone holding the receipt can compute it, so a
// tool checks who sent a request (for example the gateway's signature)
// before it trusts the key.
func IdempotencyKey(ticket string, nonce [32]byte) string {
	buf := make([]byte, 0, len(IdempotencyTag)+1+4+len(ticket)+32)
	buf = append(append(buf, IdempotencyTag...), 0)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(ticket)))
	buf = append(buf, ticket...)
	buf = append(buf, nonce[:]...)
	sum := sha256.Sum256(buf)
	return "asu1-" + hex.EncodeToString(sum[:])
}
