package passkey

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Approver is the passkey [plug.Approver]: it verifies WebAuthn assertions
// with go-webauthn, the challenge recomputed from the stored ticket, origin
// and RP ID pinned, user presence and user verification required, the
// signature counter advanced in the store (a counter that did not advance
// is refused as a clone). It also re-verifies stored assertions offline
// (receipt.Verify) and makes receipts of them.
type Approver struct {
	creds store.Credentials
	rp    RelyingParty
	wa    *webauthn.WebAuthn
	seal  sealKey // nil: credentials are not required to carry a seal
}

var (
	_ plug.Approver = (*Approver)(nil)
	// gate.Receipter, which the gate's desk asks receipts of.
	_ interface {
		Receipt(ctx context.Context, a plug.Answer) (*receipt.Receipt, error)
	} = (*Approver)(nil)
)

// New returns the passkey approver for credentials kept in creds and
// scoped to rp. With [RequireSeal] it refuses credentials the enrollment
// did not seal; without it, it trusts every row of the credential table.
func New(creds store.Credentials, rp RelyingParty, opts ...Option) (*Approver, error) {
	if creds == nil {
		return nil, fmt.Errorf("%w: approver needs a credential store", stepup.ErrConfig)
	}
	wa, err := rp.webAuthn()
	if err != nil {
		return nil, err
	}
	w := &Approver{creds: creds, rp: rp, wa: wa}
	for _, o := range opts {
		if err := o(w); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// userHandle is the WebAuthn user handle of an approver: a hash, so the
// authenticator never stores the user's name as the handle.
func userHandle(user string) []byte {
	h := sha256.Sum256([]byte("asu/v1/user\x00" + user))
	return h[:]
}

// Options implements [plug.Approver]: request options with the ticket's
// challenge, the allowed approvers' credentials, user verification
// required.
func (w *Approver) Options(ctx context.Context, req plug.Request) (json.RawMessage, error) {
	opts := protocol.PublicKeyCredentialRequestOptions{
		Challenge:        protocol.URLEncodedBase64(req.Challenge[:]),
		Timeout:          300000, // milliseconds the browser waits for the passkey
		RelyingPartyID:   w.rp.ID,
		UserVerification: protocol.VerificationRequired,
	}
	for _, u := range req.Approvers {
		creds, err := w.creds.CredentialsByUser(ctx, u)
		if err != nil {
			return nil, ticketstore.Err("options", err)
		}
		for _, c := range creds {
			if !c.RevokedAt.IsZero() {
				continue
			}
			if err := w.seal.sealed(ctx, c); errors.Is(err, stepup.ErrStore) {
				return nil, fmt.Errorf("options: %w", err)
			} else if err != nil {
				continue
			}
			opts.AllowedCredentials = append(opts.AllowedCredentials, protocol.CredentialDescriptor{
				Type: protocol.PublicKeyCredentialType, CredentialID: c.ID,
			})
		}
	}
	if len(opts.AllowedCredentials) == 0 {
		return nil, fmt.Errorf("%w: no approver of this ticket has a credential", stepup.ErrNotPermitted)
	}
	raw, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	return raw, nil
}

// Verify implements [plug.Approver].
func (w *Approver) Verify(ctx context.Context, req plug.Request, answer []byte) (plug.Verified, error) {
	cred, parsed, err := w.check(ctx, req.Challenge[:], answer, func(user string) error {
		if !slices.Contains(req.Approvers, user) {
			return fmt.Errorf("%w: not an approver of this ticket", stepup.ErrNotPermitted)
		}
		return nil
	}, w.advanceBeforeDecision)
	if err != nil {
		return plug.Verified{}, err
	}
	raw := parsed.Raw.AssertionResponse
	ev, err := json.Marshal(Evidence{
		User: cred.User, CredentialID: bytes.Clone(cred.ID),
		AuthenticatorData: raw.AuthenticatorData, ClientDataJSON: raw.ClientDataJSON,
		Signature: raw.Signature, UserHandle: raw.UserHandle,
		RPID: w.rp.ID, Origin: w.rp.Origin,
	})
	if err != nil {
		return plug.Verified{}, fmt.Errorf("verify: %w", err)
	}
	return plug.Verified{User: cred.User, Evidence: ev}, nil
}

// signCounter advances a credential's signature counter, as
// [store.Credentials.AdvanceSignCount] does.
type signCounter func(ctx context.Context, id []byte, n uint32) error

// advanceBeforeDecision advances a credential's signature counter for an
// approval's answer: without waiting for the disk where the store can
// ([store.RelaxedSignCount]), since the gate's durable commit of what the
// answer decides follows it and makes it durable too.
func (w *Approver) advanceBeforeDecision(ctx context.Context, id []byte, n uint32) error {
	if r, ok := w.creds.(store.RelaxedSignCount); ok {
		return r.AdvanceSignCountRelaxed(ctx, id, n)
	}
	return w.creds.AdvanceSignCount(ctx, id, n)
}

// check verifies an assertion answer over challenge, by an enrolled,
// unrevoked (and, with [RequireSeal], sealed) credential whose user
// permit accepts, and advances the credential's signature counter with
// advance. It is the one verification of an assertion that approvals and
// sign-ins share; they differ in the challenge, in whom they permit and
// in how the counter's commit waits.
func (w *Approver) check(ctx context.Context, challenge, answer []byte, permit func(user string) error, advance signCounter) (store.Credential, *protocol.ParsedCredentialAssertionData, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return store.Credential{}, nil, &AssertionError{Check: "malformed"}
	}
	cred, err := w.creds.GetCredential(ctx, parsed.RawID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Credential{}, nil, ErrUnknownCredential
	}
	if err != nil {
		return store.Credential{}, nil, ticketstore.Err("verify", err)
	}
	c, p, err := w.checkEnrolled(ctx, cred, parsed, challenge, permit, advance)
	// A refused answer is one to record only if it was made for this very
	// request (its challenge is this ticket's, for this action): a copy of
	// an answer signed for another ticket is anyone's to replay.
	if err != nil && !transient(err) && w.seal.sealed(ctx, cred) == nil &&
		parsed.Response.CollectedClientData.Challenge == base64.RawURLEncoding.EncodeToString(challenge) &&
		signedBy(cred, parsed) {
		return c, p, &plug.RefusedAnswer{User: cred.User, Check: checkOf(err), Err: err}
	}
	return c, p, err
}

// signedBy reports whether the assertion's signature verifies under the
// credential's key: the answer was made by its authenticator, whatever
// else is wrong with it.
func signedBy(cred store.Credential, p *protocol.ParsedCredentialAssertionData) bool {
	key, err := webauthncose.ParsePublicKey(cred.PublicKey)
	if err != nil {
		return false
	}
	clientHash := sha256.Sum256(p.Raw.AssertionResponse.ClientDataJSON)
	data := append(bytes.Clone(p.Raw.AssertionResponse.AuthenticatorData), clientHash[:]...)
	ok, err := webauthncose.VerifySignature(key, data, p.Response.Signature)
	return err == nil && ok
}

// knownChecks are the checks an [AssertionError] names in this package's
// own words; any other (go-webauthn's description) is not repeated.
var knownChecks = []string{"malformed", "ceremony type", "challenge", "origin", "rp id", "user presence",
	"user verification", "signature"}

// checkOf names the check a refusal failed, in this package's words: never
// text taken from the answer.
func checkOf(err error) string {
	var ae *AssertionError
	switch {
	case errors.As(err, &ae) && slices.Contains(knownChecks, ae.Check):
		return ae.Check
	case errors.As(err, &ae):
		return "assertion does not verify"
	case errors.Is(err, stepup.ErrRevoked):
		return "credential revoked"
	case errors.Is(err, stepup.ErrNotPermitted):
		return "not an approver of this ticket"
	case errors.Is(err, ErrCounter):
		return "signature counter did not advance"
	case errors.Is(err, ErrUnknownCredential):
		return "credential not sealed by this enrollment"
	}
	return "refused"
}

// checkEnrolled is check of an answer by the enrolled credential cred.
func (w *Approver) checkEnrolled(ctx context.Context, cred store.Credential, parsed *protocol.ParsedCredentialAssertionData, challenge []byte, permit func(user string) error, advance signCounter) (store.Credential, *protocol.ParsedCredentialAssertionData, error) {
	if !cred.RevokedAt.IsZero() {
		return store.Credential{}, nil, fmt.Errorf("verify: %w: the credential was revoked", stepup.ErrRevoked)
	}
	if err := permit(cred.User); err != nil {
		return store.Credential{}, nil, err
	}
	if err := w.seal.sealed(ctx, cred); err != nil {
		return store.Credential{}, nil, fmt.Errorf("verify: %w", err)
	}
	u := &waUser{id: userHandle(cred.User), name: cred.User, creds: []webauthn.Credential{{
		ID:        cred.ID,
		PublicKey: cred.PublicKey,
		Flags: webauthn.CredentialFlags{UserPresent: true, UserVerified: true,
			BackupEligible: cred.BackupEligible, BackupState: cred.BackupState},
		Authenticator: webauthn.Authenticator{AAGUID: cred.AAGUID, SignCount: cred.SignCount},
	}}}
	session := webauthn.SessionData{
		Challenge:            base64.RawURLEncoding.EncodeToString(challenge),
		RelyingPartyID:       w.rp.ID,
		UserID:               u.id,
		AllowedCredentialIDs: [][]byte{cred.ID},
		UserVerification:     protocol.VerificationRequired,
	}
	if check := w.precheck(parsed, challenge); check != "" {
		return store.Credential{}, nil, &AssertionError{Check: check}
	}
	got, err := w.wa.ValidateLogin(u, session, parsed)
	if err != nil {
		check := describe(err)
		if strings.Contains(strings.ToLower(check), "signature") {
			check = "signature"
		}
		return store.Credential{}, nil, &AssertionError{Check: check}
	}
	if got.Authenticator.CloneWarning {
		return store.Credential{}, nil, ErrCounter
	}
	if err := advance(ctx, cred.ID, parsed.Response.AuthenticatorData.Counter); err != nil {
		return store.Credential{}, nil, signCountErr(err)
	}
	return cred, parsed, nil
}

// precheck names the first of the plain checks an assertion fails, so a
// refusal says which one; go-webauthn then repeats them all with the
// signature.
func (w *Approver) precheck(p *protocol.ParsedCredentialAssertionData, challenge []byte) string {
	cd := p.Response.CollectedClientData
	rpHash := sha256.Sum256([]byte(w.rp.ID))
	flags := p.Response.AuthenticatorData.Flags
	switch {
	case cd.Type != protocol.AssertCeremony:
		return "ceremony type"
	case cd.Challenge != base64.RawURLEncoding.EncodeToString(challenge):
		return "challenge"
	case cd.Origin != w.rp.Origin:
		return "origin"
	case !bytes.Equal(p.Response.AuthenticatorData.RPIDHash, rpHash[:]):
		return "rp id"
	case !flags.UserPresent():
		return "user presence"
	case !flags.UserVerified():
		return "user verification"
	}
	return ""
}

// describe returns a go-webauthn error's message without its type, which
// stays out of the public API.
func describe(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		if pe.DevInfo != "" {
			return pe.Details + ": " + pe.DevInfo
		}
		return pe.Details
	}
	return err.Error()
}

// waUser is an approver as go-webauthn sees it.
type waUser struct {
	id    []byte
	name  string
	creds []webauthn.Credential
}

func (u *waUser) WebAuthnID() []byte                         { return u.id }
func (u *waUser) WebAuthnName() string                       { return u.name }
func (u *waUser) WebAuthnDisplayName() string                { return u.name }
func (u *waUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }
