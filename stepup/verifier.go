package stepup

import (
	"context"
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// Refusals of execution tokens that are not about the ticket itself; a
// token for a used, expired or different call is refused with
// [ErrConsumed], [ErrExpired] or [ErrEffectChanged].
var (
	// ErrTokenMalformed means the token is not a JWT of the execution
	// token's shape: bad encoding, wrong "typ", a claim missing or
	// ill-formed.
	ErrTokenMalformed = errors.New("stepup: execution token malformed")
	// ErrTokenSignature means the token is not signed with EdDSA by the
	// gate's key; "none", HMAC and RSA tokens land here whatever their
	// signature.
	ErrTokenSignature = errors.New("stepup: execution token signature does not verify")
	// ErrTokenIssuer means the token was issued by another gate.
	ErrTokenIssuer = errors.New("stepup: execution token from another issuer")
	// ErrTokenAudience means the token is addressed to another executor.
	ErrTokenAudience = errors.New("stepup: execution token addressed to another executor")
)

// Verifier is the executor's side of execution tokens: a service that
// runs a tool for the gate checks each token against the call it is about
// to run, and spends the ticket once in the store it shares with the gate.
// A Verifier is safe for concurrent use.
type Verifier struct {
	pub      ed25519.PublicKey
	issuer   string
	audience string
	st       store.Execution
	now      func() time.Time
	resolver canon.Resolver
	parser   *jwt.Parser
}

// VerifierOption configures a [Verifier].
type VerifierOption func(*Verifier) error

// WithVerifierClock sets the verifier's clock (default time.Now).
func WithVerifierClock(now func() time.Time) VerifierOption {
	return func(v *Verifier) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrConfig)
		}
		v.now = now
		return nil
	}
}

// WithVerifierResolver re-resolves the references of the effect about to
// run before hashing it, so a file edited after the approval changes the
// digest and the call is refused. Without it the effect's Refs are hashed
// as given: the executor must then resolve them itself.
func WithVerifierResolver(r canon.Resolver) VerifierOption {
	return func(v *Verifier) error {
		if r == nil {
			return fmt.Errorf("%w: nil resolver", ErrConfig)
		}
		v.resolver = r
		return nil
	}
}

// NewVerifier returns the verifier of tokens that issuer signed with the
// private half of pub and addressed to audience (this executor's name, the
// Audience of the effects it runs), spending tickets in st, the store the
// gate uses.
func NewVerifier(pub ed25519.PublicKey, issuer, audience string, st store.Execution, opts ...VerifierOption) (*Verifier, error) {
	switch {
	case len(pub) != ed25519.PublicKeySize:
		return nil, fmt.Errorf("%w: verifier needs an Ed25519 public key", ErrConfig)
	case issuer == "" || audience == "":
		return nil, fmt.Errorf("%w: verifier needs an issuer and an audience", ErrConfig)
	case st == nil:
		return nil, fmt.Errorf("%w: verifier needs the gate's store", ErrConfig)
	}
	v := &Verifier{
		pub: append(ed25519.PublicKey{}, pub...), issuer: issuer, audience: audience, st: st, now: time.Now,
		// Only EdDSA: the algorithm in the header is the attacker's choice,
		// and "none" or HS256 keyed with the public key must not verify.
		// Claims are checked below, with the injected clock and the
		// package's sentinels.
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
			jwt.WithoutClaimsValidation(), jwt.WithStrictDecoding()),
	}
	for _, o := range opts {
		if err := o(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Verify checks token against e, the call this executor is about to run,
// and spends the ticket. In order: the signature (EdDSA with the gate's
// key, nothing else), the "typ" header, the issuer, the audience (this
// executor, and only it), the expiry with the verifier's clock, and the
// digest of e (references re-resolved with [WithVerifierResolver]),
// compared in constant time with the token's. Only then is the ticket
// consumed in the store with a fresh idempotency key, returned in Claims:
// pass it to the tool. Of any number of Verify calls for one ticket, and
// [Gate.Execute] on it, at most one succeeds; the others fail with
// [ErrConsumed].
//
// Refusals wrap [ErrTokenMalformed], [ErrTokenSignature], [ErrTokenIssuer],
// [ErrTokenAudience], [ErrExpired], [ErrEffectChanged], [ErrConsumed],
// [ErrNotApproved] or [ErrNotFound]; none but the last three changes the
// store. A crash after Verify leaves the ticket executing; store.Execution's
// Recover lists it with its key.
func (v *Verifier) Verify(ctx context.Context, token string, e canon.Effect) (Claims, error) {
	c, err := v.check(token)
	if err != nil {
		return Claims{}, err
	}
	if v.resolver != nil {
		refs, err := canon.ResolveAll(ctx, v.resolver, e.Refs)
		if err != nil {
			return Claims{}, fmt.Errorf("verify token: %w: a reference no longer resolves", ErrEffectChanged)
		}
		e.Refs = refs
	}
	d, err := e.Digest()
	if err != nil || !d.Equal(c.Digest) {
		return Claims{}, fmt.Errorf("verify token: %w", ErrEffectChanged)
	}
	key, err := newKey()
	if err != nil {
		return Claims{}, fmt.Errorf("verify token: %w", err)
	}
	a, err := v.st.Consume(ctx, string(c.Ticket), key, v.now())
	if err != nil {
		return Claims{}, storeErr("verify token", err)
	}
	// The gate signed digest and nonce from this ticket; a token whose
	// claims differ from the stored ticket was not made by it, so the
	// ticket it just spent stays spent and nothing runs.
	if !a.Digest.Equal(c.Digest) || subtle.ConstantTimeCompare(a.Nonce[:], c.Nonce[:]) != 1 {
		return Claims{}, fmt.Errorf("verify token: %w: token does not match the stored ticket", ErrEffectChanged)
	}
	c.IdempotencyKey = a.IdempotencyKey
	return c, nil
}

// check verifies the token's signature and claims, not the effect.
func (v *Verifier) check(token string) (Claims, error) {
	var tc tokenClaims
	t, err := v.parser.ParseWithClaims(token, &tc, func(t *jwt.Token) (any, error) {
		if _, ok := t.Method.(*jwt.SigningMethodEd25519); !ok {
			return nil, ErrTokenSignature
		}
		return v.pub, nil
	})
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return Claims{}, fmt.Errorf("verify token: %w", ErrTokenMalformed)
	case err != nil:
		return Claims{}, fmt.Errorf("verify token: %w", ErrTokenSignature)
	case t.Header["typ"] != TokenType:
		return Claims{}, fmt.Errorf("verify token: %w: not an execution token", ErrTokenMalformed)
	case tc.Issuer != v.issuer:
		return Claims{}, fmt.Errorf("verify token: %w", ErrTokenIssuer)
	case len(tc.Audience) != 1 || tc.Audience[0] != v.audience:
		return Claims{}, fmt.Errorf("verify token: %w", ErrTokenAudience)
	case tc.ExpiresAt == nil || tc.IssuedAt == nil:
		return Claims{}, fmt.Errorf("verify token: %w: no expiry or issue time", ErrTokenMalformed)
	case !v.now().Before(tc.ExpiresAt.Time):
		return Claims{}, fmt.Errorf("verify token: %w", ErrExpired)
	case tc.ID == "" || tc.Subject == "":
		return Claims{}, fmt.Errorf("verify token: %w: no ticket or approver", ErrTokenMalformed)
	}
	c := Claims{Ticket: TicketID(tc.ID), Issuer: tc.Issuer, Audience: tc.Audience[0], Approver: tc.Subject,
		IssuedAt: tc.IssuedAt.Time, ExpiresAt: tc.ExpiresAt.Time}
	if c.Digest, err = canon.ParseDigest(tc.Digest); err != nil {
		return Claims{}, fmt.Errorf("verify token: %w: digest claim", ErrTokenMalformed)
	}
	n, err := hex.DecodeString(tc.Nonce)
	if err != nil || len(n) != len(c.Nonce) {
		return Claims{}, fmt.Errorf("verify token: %w: nonce claim", ErrTokenMalformed)
	}
	copy(c.Nonce[:], n)
	return c, nil
}

// Finish records the outcome of the run a [Verifier.Verify] allowed:
// output (JSON, or bytes kept as a base64 string) when runErr is nil, a
// failure otherwise. The ticket moves from executing to done; finishing it
// twice fails with [ErrStore] wrapping the store's refusal.
func (v *Verifier) Finish(ctx context.Context, c Claims, output []byte, runErr error) error {
	stored := storedResult{OK: runErr == nil}
	switch {
	case runErr != nil:
		stored.Error = "executor failed"
	case json.Valid(output):
		stored.Output = output
	case output != nil:
		stored.Output, _ = json.Marshal(output)
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("finish: %w: %v", ErrStore, err)
	}
	if _, err := v.st.Finish(ctx, string(c.Ticket), raw, v.now()); err != nil {
		return storeErr("finish", err)
	}
	return nil
}
