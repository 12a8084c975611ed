package gateway

import (
	"crypto/sha256"

	"github.com/agentstepup/asu/stepup"
)

// DenyTag separates deny challenges from every other hash asu signs.
const DenyTag = "asu/v1/deny"

// DenyChallenge is what an approver's passkey signs to deny a ticket:
//
//	SHA-256("asu/v1/deny" ‖ 0x00 ‖ approve challenge[32])
//
// It commits to the ticket's approve challenge (so to its digest, nonce,
// expiry and card hash) and can never equal it, so a denial cannot be
// replayed as an approval, nor an approval as a denial.
func DenyChallenge(approve [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(DenyTag))
	h.Write([]byte{0})
	h.Write(approve[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// denyRequest is the approver request of a denial of p's ticket.
func denyRequest(p stepup.Prompt) stepup.Request {
	return stepup.Request{Ticket: p.Ticket.ID, Digest: p.Ticket.Digest, ExpiresAt: p.Ticket.ExpiresAt,
		Challenge: DenyChallenge(p.Challenge), Approvers: p.Approvers}
}
