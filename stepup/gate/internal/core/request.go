package core

import (
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
)

// NewRequest builds the request of action about a stored ticket: its
// challenge is receipt.Challenge of the ticket's digest, nonce, expiry and
// card hash, or receipt.DenyChallenge of that for a denial.
func NewRequest(action plug.Action, id string, digest canon.Digest, nonce [32]byte, exp time.Time,
	cardHash canon.Digest, approvers []string) plug.Request {
	challenge := receipt.Challenge(digest, nonce, exp.Unix(), cardHash)
	if action == plug.ActionDeny {
		challenge = receipt.DenyChallenge(challenge)
	}
	return plug.Request{
		Ticket: stepup.TicketID(id), Action: action, Digest: digest, Nonce: nonce, ExpiresAt: exp,
		CardHash: cardHash, Challenge: challenge, Approvers: approvers,
	}
}
