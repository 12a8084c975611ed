package plug

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Approver is how a person's answer about a ticket is asked for, checked
// and kept: the passkey approver (package passkey) is the default; a test
// double (stepuptest), a hardware-token or a model-based approver plugs in
// the same way. The gate, not the Approver, decides who may answer (the
// ticket's user, or the approver group the policy names; never the
// requester or an agent) and that a ticket is decided once.
type Approver interface {
	// Options returns what the approver's device needs to answer req; for
	// passkeys, PublicKeyCredentialRequestOptions JSON whose challenge is
	// req.Challenge.
	Options(ctx context.Context, req Request) (json.RawMessage, error)
	// Verify checks answer against req, which the gate rebuilt from the
	// stored ticket, and returns who answered with the evidence to keep.
	// An answer that does not verify wraps [stepup.ErrBadAssertion].
	Verify(ctx context.Context, req Request, answer []byte) (Verified, error)
	// Recheck verifies stored evidence again, without side effects (no
	// signature counter moves): Execute calls it before a ticket runs, so
	// a row edited in the database does not run. It fails with
	// [stepup.ErrBadAssertion] when the evidence does not prove that
	// a.User answered a.Request about exactly a.Effect and a.Card.
	Recheck(ctx context.Context, a Answer) error
}

// RefusedAnswer is how an [Approver] refuses an answer that an enrolled
// person's own authenticator made for this very request (its signature
// verifies under their credential over this ticket's challenge) but that
// may not decide the ticket: made at another origin, without user
// verification, by a revoked credential, by someone who may not decide the
// ticket. The desk records each in the audit chain, once, so an approval
// relayed by a phishing page or tried by someone holding an enrolled
// authenticator leaves a trace. Other answers are refused without a row:
// one no enrolled credential signed, or one signed for another ticket's
// challenge, is anyone's to make or replay, and must not fill the chain.
type RefusedAnswer struct {
	// User is whose credential signed the answer.
	User string
	// Check names what failed, in the approver's own words (never text
	// from the answer).
	Check string
	// Err is the refusal.
	Err error
}

func (e *RefusedAnswer) Error() string { return e.Err.Error() }

// Unwrap returns the refusal.
func (e *RefusedAnswer) Unwrap() error { return e.Err }

// Action is what an answer does to a ticket.
type Action string

// Actions.
const (
	ActionApprove Action = "approve"
	ActionDeny    Action = "deny"
)

// Request is a pending ticket as an [Approver] sees it.
type Request struct {
	Ticket    stepup.TicketID
	Action    Action
	Digest    canon.Digest
	Nonce     [32]byte
	ExpiresAt time.Time
	CardHash  canon.Digest
	// Challenge is what the answer signs: for ActionApprove,
	// receipt.Challenge(Digest, Nonce, ExpiresAt, CardHash); for
	// ActionDeny, receipt.DenyChallenge of that.
	Challenge [32]byte
	// Approvers lists the people who may answer now, never empty.
	Approvers []string
	// Quorum is how many distinct people must approve (at least one);
	// Approved lists those who already did, for a ticket that needs
	// several.
	Quorum   int
	Approved []string
}

// Verified is an answer an [Approver] accepted.
type Verified struct {
	// User is who answered; the gate checks they may decide.
	User string
	// Evidence is kept with the ticket, for [Approver.Recheck] and the
	// receipt.
	Evidence []byte
}

// Answer is a verified answer as the gate stored it, with what it was
// about.
type Answer struct {
	Request
	Verified
	// Effect and Card are the ticket's stored canonical effect and card
	// model JSON: what the answer's challenge commits to.
	Effect []byte
	Card   []byte
	// At is when the gate recorded the answer.
	At time.Time
}
