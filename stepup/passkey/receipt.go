package passkey

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Receipt implements gate.Receipter: the receipt of a passkey approval in
// the receipt.FormatV1 layout, with the stored canonical effect, digest,
// card, card hash, nonce and expiry, the approver's credential and the raw
// WebAuthn assertion as the authenticator produced it. Anyone holding only
// the approver's public key verifies it offline with receipt.Verify.
func (w *Approver) Receipt(ctx context.Context, a plug.Answer) (*receipt.Receipt, error) {
	r, _, err := w.receipt(ctx, a)
	return r, err
}

// Recheck implements [plug.Approver]: it rebuilds the receipt of a stored
// approval and verifies it offline against the enrolled credential's
// public key, so an approval row written into the database without the
// approver's passkey does not verify. The signature counter is not moved.
func (w *Approver) Recheck(ctx context.Context, a plug.Answer) error {
	if a.Action != plug.ActionApprove {
		return fmt.Errorf("recheck: %w: only approvals are rechecked", stepup.ErrBadAssertion)
	}
	r, cred, err := w.receipt(ctx, a)
	if err != nil {
		return err
	}
	if !cred.RevokedAt.IsZero() {
		return fmt.Errorf("recheck: %w: the credential was revoked", stepup.ErrRevoked)
	}
	key, err := receipt.ParseCOSEKey(cred.PublicKey)
	if err != nil {
		return fmt.Errorf("recheck: %w: enrolled key does not parse", stepup.ErrBadAssertion)
	}
	if _, err := receipt.Verify(r, key, receipt.Policy{RPID: w.rp.ID, Origins: []string{w.rp.Origin}}); err != nil {
		return fmt.Errorf("recheck: %w: %v", stepup.ErrBadAssertion, err)
	}
	return nil
}

// receipt builds the receipt of a and returns the credential it names.
func (w *Approver) receipt(ctx context.Context, a plug.Answer) (*receipt.Receipt, store.Credential, error) {
	ev, err := ParseEvidence(a.Evidence)
	if err != nil || !ev.complete() {
		return nil, store.Credential{}, fmt.Errorf("receipt: %w: the approval holds no WebAuthn assertion", plug.ErrNoReceipt)
	}
	cred, err := w.creds.GetCredential(ctx, ev.CredentialID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, store.Credential{}, fmt.Errorf("receipt: %w", ErrUnknownCredential)
	}
	if err != nil {
		return nil, store.Credential{}, ticketstore.Err("receipt: credential", err)
	}
	if cred.User != ev.User || ev.User != a.User {
		// The evidence, the ticket and the enrolment disagree on who
		// approved: a damaged store, not a receipt to hand out.
		return nil, store.Credential{}, fmt.Errorf("receipt: %w: evidence does not name the ticket's approver", stepup.ErrBadAssertion)
	}
	if err := w.seal.sealed(ctx, cred); errors.Is(err, stepup.ErrStore) {
		return nil, store.Credential{}, fmt.Errorf("receipt: %w", err)
	} else if err != nil {
		return nil, store.Credential{}, fmt.Errorf("receipt: %w: %w", stepup.ErrBadAssertion, err)
	}
	return &receipt.Receipt{
		Format:     receipt.FormatV1,
		Effect:     bytes.Clone(a.Effect),
		Digest:     a.Digest,
		Card:       bytes.Clone(a.Card),
		CardHash:   a.CardHash,
		Nonce:      bytes.Clone(a.Nonce[:]),
		ExpiresAt:  a.ExpiresAt.Unix(),
		ApprovedAt: a.At.Unix(),
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
	}, cred, nil
}
