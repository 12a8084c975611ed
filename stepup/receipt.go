package stepup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// ErrNoReceipt means a ticket has no passkey approval to show: it is
// pending, was denied, cancelled or timed out, was allowed by the policy
// without an approver, or was approved by an [Approver] that keeps no
// WebAuthn [Evidence].
var ErrNoReceipt = errors.New("stepup: no passkey approval to make a receipt of")

// Receipt returns the receipt of ticket id's approval in the
// receipt.FormatV1 layout: the stored canonical effect, digest, card, card
// hash, nonce and expiry, the approver's credential and the raw WebAuthn
// assertion as the authenticator produced it. Anyone holding only the
// approver's public key verifies it offline with receipt.Verify.
//
// The ticket must have been approved with a passkey; it may since have run
// or expired, since a receipt stays evidence of what was approved.
// Otherwise Receipt fails with [ErrNoReceipt]; an unknown id fails with
// [ErrNotFound].
func (d *ApprovalDesk) Receipt(ctx context.Context, id TicketID) (*receipt.Receipt, error) {
	a, err := d.g.st.Get(ctx, string(id))
	if err != nil {
		return nil, storeErr("receipt", err)
	}
	switch a.State {
	case store.Approved, store.Executing, store.Done:
	default:
		return nil, fmt.Errorf("receipt: %w: ticket is %s", ErrNoReceipt, a.State)
	}
	if strings.HasPrefix(a.Approver, policyApprover) || len(a.Evidence) == 0 {
		return nil, fmt.Errorf("receipt: %w: no approver signed this ticket", ErrNoReceipt)
	}
	ev, err := ParseEvidence(a.Evidence)
	if err != nil || !hasAssertion(ev) {
		return nil, fmt.Errorf("receipt: %w: the approval holds no WebAuthn assertion", ErrNoReceipt)
	}
	cred, err := d.g.st.GetCredential(ctx, ev.CredentialID)
	if err != nil {
		return nil, storeErr("receipt: credential", err)
	}
	if cred.User != ev.User || ev.User != a.Approver {
		// The evidence, the ticket and the enrolment disagree on who
		// approved: a damaged store, not a receipt to hand out.
		return nil, fmt.Errorf("receipt: %w: evidence does not name the ticket's approver", ErrStore)
	}
	return &receipt.Receipt{
		Format:     receipt.FormatV1,
		Effect:     bytes.Clone(a.Effect),
		Digest:     a.Digest,
		Card:       bytes.Clone(a.Card),
		CardHash:   a.CardHash,
		Nonce:      bytes.Clone(a.Nonce[:]),
		ExpiresAt:  a.ExpiresAt.Unix(),
		ApprovedAt: a.ResolvedAt.Unix(),
		Approver: receipt.Approver{
			User:         ev.User,
			CredentialID: bytes.Clone(ev.CredentialID),
			PublicKey:    bytes.Clone(cred.PublicKey),
		},
		RPID:   ev.RPID,
		Origin: ev.Origin,
		Assertion: receipt.Assertion{
			AuthenticatorData: ev.AuthenticatorData,
			ClientDataJSON:    ev.ClientDataJSON,
			Signature:         ev.Signature,
			UserHandle:        ev.UserHandle,
		},
	}, nil
}

// hasAssertion reports whether e holds a whole WebAuthn assertion.
func hasAssertion(e Evidence) bool {
	return e.User != "" && len(e.CredentialID) > 0 && len(e.AuthenticatorData) > 0 &&
		len(e.ClientDataJSON) > 0 && len(e.Signature) > 0 && e.RPID != "" && e.Origin != ""
}
