package receipt

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/agentstepup/asu/canon"
)

// ChallengeTag separates asu approval challenges from every other use of
// the approver's passkey.
const ChallengeTag = "asu/v1/approve"

// Challenge returns the WebAuthn challenge an approver's passkey signs:
//
//	SHA-256("asu/v1/approve" ‖ 0x00 ‖ digest[32] ‖ nonce[32] ‖ uint64be(expiresAt) ‖ cardHash[32])
//
// where expiresAt is in Unix seconds. It commits the signature to the exact
// effect, a single-use nonce, the expiry and the card the approver saw;
// anyone holding a receipt can recompute it.
func Challenge(digest canon.Digest, nonce [32]byte, expiresAt int64, cardHash canon.Digest) [32]byte {
	var buf [len(ChallengeTag) + 1 + 32 + 32 + 8 + 32]byte
	n := copy(buf[:], ChallengeTag)
	buf[n] = 0
	n++
	n += copy(buf[n:], digest[:])
	n += copy(buf[n:], nonce[:])
	binary.BigEndian.PutUint64(buf[n:], uint64(expiresAt))
	n += 8
	copy(buf[n:], cardHash[:])
	return sha256.Sum256(buf[:])
}

// DenyTag separates deny challenges from every other hash asu signs.
const DenyTag = "asu/v1/deny"

// DenyChallenge returns what an approver's passkey signs to deny a ticket:
//
//	SHA-256("asu/v1/deny" ‖ 0x00 ‖ approve[32])
//
// where approve is the ticket's [Challenge]. It commits to the same digest,
// nonce, expiry and card hash, and never equals an approve challenge, so a
// denial cannot be replayed as an approval, nor an approval as a denial.
func DenyChallenge(approve [32]byte) [32]byte {
	var buf [len(DenyTag) + 1 + 32]byte
	n := copy(buf[:], DenyTag)
	buf[n] = 0
	copy(buf[n+1:], approve[:])
	return sha256.Sum256(buf[:])
}
