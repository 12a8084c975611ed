package exectoken

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
)

// TokenType is the "typ" header of an execution token (RFC 8725 §3.11
// explicit typing), so a JWT the same key signs for another purpose is
// never taken for one.
const TokenType = "asu-exec+jwt"

// MaxTokenSize is the longest execution token, in bytes. A token is a few
// hundred bytes; [Verifier.Verify] refuses a longer one with
// [ErrTokenMalformed] before it decodes any of it, and
// [TokenIssuer.Issue] never issues one (only an issuer name, a ticket id
// or an approver kilobytes long would need it).
const MaxTokenSize = 4 << 10

// DefaultTokenTTL is how long an execution token lives when
// [WithTokenTTL] does not say; never past the ticket's expiry.
const DefaultTokenTTL = 60 * time.Second

// TokenIssuer issues execution tokens: when a tool runs in another service,
// the gate hands the runtime a token for an approved ticket instead of
// running the tool itself, and the service's [Verifier] checks it against
// the call it is about to run and consumes the ticket once.
//
// A token is a JWT signed with EdDSA by the gate's Ed25519 key, readable by
// any JWT library; with [NewTokenIssuerRing] its "kid" header names the
// ring key that signed it. Its claims are
//
//	jti     the ticket id
//	iss     the issuer name
//	aud     the effect's audience: the executor that may run it
//	sub     the approver (a user, or "policy:<version>" for an allowed call)
//	iat     when it was issued
//	exp     the ticket's expiry or iat + TTL, whichever is earlier
//	digest  the approved effect's digest, 64 hex characters
//	nonce   the ticket's nonce, 64 hex characters
//
// Issuing consumes nothing: the ticket is spent by the executor's
// [Verifier.Verify], or by [Gate.Execute], whichever comes first.
type TokenIssuer struct {
	g      *gate.Gate
	key    crypto.Signer
	keys   keyring.Source // NewTokenIssuerRing's ring, instead of key
	issuer string
	ttl    time.Duration
}

// TokenOption configures a [TokenIssuer].
type TokenOption func(*TokenIssuer) error

// WithTokenTTL sets how long tokens live (default [DefaultTokenTTL]).
// Keep it short: a token is a bearer credential until it is used.
func WithTokenTTL(d time.Duration) TokenOption {
	return func(ti *TokenIssuer) error {
		if d <= 0 {
			return fmt.Errorf("%w: token TTL must be positive", stepup.ErrConfig)
		}
		ti.ttl = d
		return nil
	}
}

// NewTokenIssuer returns the issuer of g's execution tokens, signing with
// key (an ed25519.PrivateKey, or any crypto.Signer whose public key is
// Ed25519, such as a key in a hardware module) under the name issuer.
// Executors verify with the public key and the same issuer name.
func NewTokenIssuer(g *gate.Gate, key crypto.Signer, issuer string, opts ...TokenOption) (*TokenIssuer, error) {
	if g == nil || key == nil || issuer == "" {
		return nil, fmt.Errorf("%w: token issuer needs a gate, a key and an issuer name", stepup.ErrConfig)
	}
	if k, ok := key.(ed25519.PrivateKey); ok && len(k) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: token key is not Ed25519", stepup.ErrConfig)
	}
	pub, ok := key.Public().(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: token key is not Ed25519", stepup.ErrConfig)
	}
	// A signer that does not sign for its public key (a misconfigured
	// hardware module, say) would issue tokens no executor accepts.
	probe := []byte("asu/v1/token-key-probe")
	sig, err := key.Sign(rand.Reader, probe, crypto.Hash(0))
	if err != nil || !ed25519.Verify(pub, probe, sig) {
		return nil, fmt.Errorf("%w: token key does not sign for its public key", stepup.ErrConfig)
	}
	ti := &TokenIssuer{g: g, key: key, issuer: issuer, ttl: DefaultTokenTTL}
	for _, o := range opts {
		if err := o(ti); err != nil {
			return nil, err
		}
	}
	return ti, nil
}

// PublicKey returns the key executors verify tokens with: with
// [NewTokenIssuerRing], the ring's current key.
func (ti *TokenIssuer) PublicKey() ed25519.PublicKey {
	if ti.keys != nil {
		return ti.keys.Ring().Current().Ed25519().Public().(ed25519.PublicKey)
	}
	return ti.key.Public().(ed25519.PublicKey)
}

// Issue returns an execution token for ticket id. The ticket must be
// approved (by an approver or by the policy), unexpired and unused, and its
// stored effect must still hash to the approved digest with its references
// re-resolved, exactly as [Gate.Execute] would require. Refusals wrap
// [ErrNotFound], [ErrNotApproved], [ErrConsumed], [ErrExpired],
// [ErrEffectChanged] or [ErrNoExecutor] (the effect names no audience).
func (ti *TokenIssuer) Issue(ctx context.Context, id stepup.TicketID) (string, error) {
	r, err := ti.g.Runnable(ctx, id)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	eff, now := r.Effect, r.Now
	if eff.Audience == "" {
		return "", fmt.Errorf("token: %w: the effect names no executor", stepup.ErrNoExecutor)
	}
	exp := now.Add(ti.ttl)
	if r.ExpiresAt.Before(exp) {
		exp = r.ExpiresAt
	}
	claims := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			ID:        string(r.ID),
			Issuer:    ti.issuer,
			Audience:  jwt.ClaimStrings{eff.Audience},
			Subject:   r.Approver,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp), // truncated to the second: never later than exp
		},
		Digest: r.Digest.String(),
		Nonce:  hex.EncodeToString(r.Nonce[:]),
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	t.Header["typ"] = TokenType
	priv, signer, kid := ti.signer()
	if kid != "" {
		t.Header["kid"] = kid
	}
	var s string
	if priv != nil {
		s, err = t.SignedString(priv)
	} else {
		s, err = t.SignedString(signer)
	}
	if err != nil {
		return "", fmt.Errorf("token: %w: signing failed", stepup.ErrConfig)
	}
	if len(s) > MaxTokenSize {
		// Every executor would refuse it: the issuer name is too long.
		return "", fmt.Errorf("token: %w: the token is longer than %d bytes; shorten the issuer name", stepup.ErrConfig, MaxTokenSize)
	}
	return s, nil
}

// tokenClaims is the JSON payload of an execution token.
type tokenClaims struct {
	jwt.RegisteredClaims
	Digest string `json:"digest"`
	Nonce  string `json:"nonce"`
}

// Claims is what a verified execution token says, and the idempotency key
// its executor must pass to the tool.
type Claims struct {
	// Ticket is the ticket the token spends (jti).
	Ticket stepup.TicketID
	// Issuer names the gate that issued the token (iss).
	Issuer string
	// Audience names the executor it is addressed to (aud).
	Audience string
	// Approver is who approved the call (sub): a user, or
	// "policy:<version>" when the policy allowed it.
	Approver string
	// Digest is the approved effect's digest; the effect about to run
	// hashed to it.
	Digest canon.Digest
	// Nonce is the ticket's nonce, the one its approval signed.
	Nonce [32]byte
	// IssuedAt and ExpiresAt bound the token's life.
	IssuedAt, ExpiresAt time.Time
	// IdempotencyKey is the key the ticket was consumed with. Pass it to
	// the tool: a retried execution must reuse it, never a new one.
	IdempotencyKey string
	// Fence is the fencing token of this executor's hold on the ticket:
	// [Verifier.Finish] records an outcome only while it is current.
	Fence int64
}
