package passkey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/internal/freetext"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// DefaultInviteTTL is how long an enrollment invite stays redeemable when
// [WithInviteTTL] does not say.
const DefaultInviteTTL = 24 * time.Hour

// InviteStore is what enrollment keeps: the invites and the credentials
// they enroll. Every backend in store/ implements it.
type InviteStore interface {
	store.Invites
	store.Credentials
}

// Enrollment is the administrator's side of passkeys: approvers' passkeys
// are enrolled only through a one-time invite minted here, so a passkey on
// the agent's own host cannot be enrolled through the agent's channel. It
// is never handed to the agent runtime.
type Enrollment struct {
	st   InviteStore
	rp   RelyingParty
	wa   *webauthn.WebAuthn
	now  func() time.Time
	ttl  time.Duration
	seal sealKey // nil: credentials are stored unsealed
}

// EnrollOption configures an [Enrollment].
type EnrollOption func(*Enrollment) error

// WithClock sets the enrollment's clock (default time.Now).
func WithClock(now func() time.Time) EnrollOption {
	return func(e *Enrollment) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", stepup.ErrConfig)
		}
		e.now = now
		return nil
	}
}

// WithInviteTTL sets how long an invite stays redeemable (default
// [DefaultInviteTTL]).
func WithInviteTTL(d time.Duration) EnrollOption {
	return func(e *Enrollment) error {
		if d <= 0 {
			return fmt.Errorf("%w: invite TTL must be positive", stepup.ErrConfig)
		}
		e.ttl = d
		return nil
	}
}

// NewEnrollment returns the enrollment of passkeys scoped to rp, kept in
// st.
func NewEnrollment(st InviteStore, rp RelyingParty, opts ...EnrollOption) (*Enrollment, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: enrollment needs a store", stepup.ErrConfig)
	}
	wa, err := rp.webAuthn()
	if err != nil {
		return nil, err
	}
	e := &Enrollment{st: st, rp: rp, wa: wa, now: time.Now, ttl: DefaultInviteTTL}
	for _, o := range opts {
		if err := o(e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Invite mints a one-time enrollment invite for user and returns its
// secret token, to hand to the user out of band. Only the token's hash is
// stored. Agent principals cannot be invited, nor names the gate uses for
// its own approvals ("policy:...", "grant:..."): a passkey approval by such
// a user would read as the policy's or a grant's.
func (ad *Enrollment) Invite(ctx context.Context, user string) (string, error) {
	if err := checkApprover(user); err != nil {
		return "", fmt.Errorf("invite: %w", err)
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", fmt.Errorf("invite: %w", err)
	}
	token := b64.EncodeToString(secret[:]) + "." + b64.EncodeToString([]byte(user))
	now := ad.now()
	err := ad.st.CreateInvite(ctx, store.Invite{
		TokenHash: sha256.Sum256([]byte(token)), User: user,
		CreatedAt: now, ExpiresAt: now.Add(ad.ttl),
	})
	if err != nil {
		return "", ticketstore.Err("invite", err)
	}
	return token, nil
}

var b64 = base64.RawURLEncoding

// inviteUser reads the user a token names. The name is not trusted until
// the token's hash is redeemed in the store.
func inviteUser(token string) (string, error) {
	secret, user, ok := strings.Cut(token, ".")
	s, err1 := b64.DecodeString(secret)
	u, err2 := b64.DecodeString(user)
	if !ok || err1 != nil || err2 != nil || len(s) != 32 || len(u) == 0 {
		return "", fmt.Errorf("%w: malformed token", ErrInvite)
	}
	return string(u), nil
}

// enrollChallenge derives the registration challenge from the secret
// token, so no session state is kept between BeginEnroll and FinishEnroll.
func enrollChallenge(token string) []byte {
	h := sha256.Sum256([]byte("asu/v1/enroll\x00" + token))
	return h[:]
}

// BeginEnroll returns the PublicKeyCredentialCreationOptions JSON for the
// user an invite names (user verification required, no attestation). It
// fails with [ErrInvite] when the invite is unknown, already redeemed,
// expired by the gate's clock, or minted for another user than the token
// names, so an enrollment page is never shown for an invite that cannot
// succeed. The check only reads the invite: it is spent, and decided
// again, by [Enrollment.FinishEnroll], since it may be used or expire meanwhile.
func (ad *Enrollment) BeginEnroll(ctx context.Context, token string) (json.RawMessage, error) {
	user, err := inviteUser(token)
	if err != nil {
		return nil, fmt.Errorf("enroll: %w", err)
	}
	inv, err := ad.st.GetInvite(ctx, sha256.Sum256([]byte(token)))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("enroll: %w", ErrInvite)
	case err != nil:
		return nil, ticketstore.Err("enroll", err)
	case !inv.RedeemedAt.IsZero(), !inv.RevokedAt.IsZero(), !ad.now().Before(inv.ExpiresAt), inv.User != user:
		return nil, fmt.Errorf("enroll: %w", ErrInvite)
	}
	creation, _, err := ad.wa.BeginRegistration(&waUser{id: userHandle(user), name: user})
	if err != nil {
		return nil, fmt.Errorf("enroll: %w: %s", stepup.ErrConfig, describe(err))
	}
	creation.Response.Challenge = enrollChallenge(token)
	raw, err := json.Marshal(creation.Response)
	if err != nil {
		return nil, fmt.Errorf("enroll: %w", err)
	}
	return raw, nil
}

// FinishEnroll verifies a registration response (the JSON a browser's
// navigator.credentials.create returns) for the invite's user, spends the
// invite and stores the credential. It returns the credential id.
func (ad *Enrollment) FinishEnroll(ctx context.Context, token string, response []byte) ([]byte, error) {
	user, err := inviteUser(token)
	if err != nil {
		return nil, fmt.Errorf("enroll: %w", err)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return nil, fmt.Errorf("enroll: %w: malformed registration", stepup.ErrBadAssertion)
	}
	u := &waUser{id: userHandle(user), name: user}
	session := webauthn.SessionData{
		Challenge:        b64.EncodeToString(enrollChallenge(token)),
		RelyingPartyID:   ad.rp.ID,
		UserID:           u.id,
		UserVerification: protocol.VerificationRequired,
		CredParams:       webauthn.CredentialParametersDefault(),
	}
	cred, err := ad.wa.CreateCredential(u, session, parsed)
	if err != nil {
		return nil, fmt.Errorf("enroll: %w: %s", stepup.ErrBadAssertion, describe(err))
	}
	// A key no receipt can be verified against proves no approval: an
	// Ed25519 key of small order, which anyone signs for, a short RSA
	// key, another encoding of an enrolled key. Refused before the invite
	// is spent, so a good passkey may follow.
	if _, err := receipt.ParseCOSEKey(cred.PublicKey); err != nil {
		return nil, fmt.Errorf("enroll: %w: %w", stepup.ErrBadAssertion, err)
	}
	now := ad.now()
	inv, err := ad.st.RedeemInvite(ctx, sha256.Sum256([]byte(token)), now)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConsumed), errors.Is(err, store.ErrExpired),
		errors.Is(err, store.ErrRevoked):
		return nil, fmt.Errorf("enroll: %w", ErrInvite)
	case err != nil:
		return nil, ticketstore.Err("enroll", err)
	case inv.User != user:
		return nil, fmt.Errorf("enroll: %w", ErrInvite)
	}
	c := store.Credential{
		ID: cred.ID, User: user, PublicKey: cred.PublicKey, SignCount: cred.Authenticator.SignCount,
		BackupEligible: cred.Flags.BackupEligible, BackupState: cred.Flags.BackupState,
		AAGUID: cred.Authenticator.AAGUID, CreatedAt: now,
	}
	if ad.seal != nil {
		c.Seal = ad.seal.seal(c)
	}
	err = ad.st.PutCredential(ctx, c)
	if err != nil {
		return nil, ticketstore.Err("enroll", err)
	}
	return cred.ID, nil
}

// RevokeCredential revokes passkey id: it never approves or denies again,
// and approvals it made that have not run yet no longer run (the gate
// re-verifies them before running, and a revoked credential fails). by
// names who revoked it in the audit row, and reason says why; both are
// kept as one line of text of at most 512 bytes (invalid UTF-8 and
// control characters replaced), and never keep the revocation from
// being made.
func (ad *Enrollment) RevokeCredential(ctx context.Context, id []byte, by, reason string) error {
	cred, err := ad.st.GetCredential(ctx, id)
	if err != nil {
		return ticketstore.Err("revoke credential", err)
	}
	why := "passkey of " + cred.User + " revoked by " + freetext.Reason(by)
	if reason = freetext.Reason(reason); reason != "" { // the reason never decides whether the revocation is made
		why += ": " + reason
	}
	err = ad.st.RevokeCredential(ctx, id, ad.now(), func(store.Approval, bool) audit.Record {
		return audit.Record{Task: "enrollment", Session: "enrollment:" + cred.User,
			Principal: canon.Principal{User: cred.User}, Decision: audit.DecisionRevoked, Reason: why,
			Approver: cred.User}
	})
	if err != nil {
		return ticketstore.Err("revoke credential", err)
	}
	return nil
}

// RevokeInvite revokes an unredeemed invite: it can no longer enroll a
// passkey. by names who revoked it in the audit row, kept as
// [Enrollment.RevokeCredential] keeps it.
func (ad *Enrollment) RevokeInvite(ctx context.Context, token, by string) error {
	user, err := inviteUser(token)
	if err != nil {
		return fmt.Errorf("revoke invite: %w", err)
	}
	why := "invite of " + user + " revoked by " + freetext.Reason(by)
	err = ad.st.RevokeInvite(ctx, sha256.Sum256([]byte(token)), ad.now(), func(store.Approval, bool) audit.Record {
		return audit.Record{Task: "enrollment", Session: "enrollment:" + user,
			Principal: canon.Principal{User: user}, Decision: audit.DecisionRevoked, Reason: why}
	})
	if err != nil {
		return ticketstore.Err("revoke invite", err)
	}
	return nil
}
