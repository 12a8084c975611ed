package stepup

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
)

// Approver is how approvers' answers are asked for and checked. The
// WebAuthn approver ([NewWebAuthnApprover]) is the default; a model-based
// approver or a test double plugs in through [WithApprover]. The gate, not
// the Approver, enforces who may approve (not the requester, not an agent,
// in the ticket's approver group) and that a ticket is decided once.
type Approver interface {
	// Options returns what the approver's device needs to answer req; for
	// WebAuthn, PublicKeyCredentialRequestOptions JSON whose challenge is
	// req.Challenge.
	Options(ctx context.Context, req Request) (json.RawMessage, error)
	// Verify checks answer against req, which the gate rebuilt from the
	// stored ticket, and returns who approved with the evidence to keep.
	Verify(ctx context.Context, req Request, answer []byte) (Verified, error)
}

// Request is a pending ticket as an [Approver] sees it.
type Request struct {
	Ticket    TicketID
	Digest    canon.Digest
	Nonce     [32]byte
	ExpiresAt time.Time
	CardHash  canon.Digest
	// Challenge is receipt.Challenge(Digest, Nonce, ExpiresAt, CardHash).
	Challenge [32]byte
	// Approvers lists the users who may approve now; nil means any
	// enrolled approver.
	Approvers []string
}

func newRequest(id string, digest canon.Digest, nonce [32]byte, exp time.Time, cardHash canon.Digest, approvers []string) Request {
	return Request{
		Ticket: TicketID(id), Digest: digest, Nonce: nonce, ExpiresAt: exp, CardHash: cardHash,
		Challenge: receipt.Challenge(digest, nonce, exp.Unix(), cardHash),
		Approvers: approvers,
	}
}

// Verified is an answer an [Approver] accepted.
type Verified struct {
	// User is the approver; the gate checks it may decide.
	User string
	// Evidence is kept with the ticket for the receipt (for WebAuthn, an
	// [Evidence] in JSON).
	Evidence []byte
}
