package exectoken

import (
	"context"
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
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
	st       store.Approvals
	now      func() time.Time
	resolver canon.Resolver
	audit    store.AuditLog
	parser   *jwt.Parser
}

// VerifierOption configures a [Verifier].
type VerifierOption func(*Verifier) error

// WithVerifierClock sets the verifier's clock (default time.Now).
func WithVerifierClock(now func() time.Time) VerifierOption {
	return func(v *Verifier) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", stepup.ErrConfig)
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
			return fmt.Errorf("%w: nil resolver", stepup.ErrConfig)
		}
		v.resolver = r
		return nil
	}
}

// WithVerifierAudit appends the executor's decisions to log, the gate's
// audit chain: every refusal of a token the gate signed (a wrong call, a
// used or expired approval, another executor's token) and, at
// [Verifier.Finish], the outcome of the run. Tokens that are not the gate's
// are refused without a row, so forgeries cannot flood the chain. A
// decision that cannot be audited fails: the refusal still stands, and
// Finish reports the error after recording the outcome in the store.
func WithVerifierAudit(log store.AuditLog) VerifierOption {
	return func(v *Verifier) error {
		if log == nil {
			return fmt.Errorf("%w: nil audit log", stepup.ErrConfig)
		}
		v.audit = log
		return nil
	}
}

// NewVerifier returns the verifier of tokens that issuer signed with the
// private half of pub and addressed to audience (this executor's name, the
// Audience of the effects it runs), spending tickets in st, the store the
// gate uses.
func NewVerifier(pub ed25519.PublicKey, issuer, audience string, st store.Approvals, opts ...VerifierOption) (*Verifier, error) {
	switch {
	case len(pub) != ed25519.PublicKeySize:
		return nil, fmt.Errorf("%w: verifier needs an Ed25519 public key", stepup.ErrConfig)
	case issuer == "" || audience == "":
		return nil, fmt.Errorf("%w: verifier needs an issuer and an audience", stepup.ErrConfig)
	case st == nil:
		return nil, fmt.Errorf("%w: verifier needs the gate's store", stepup.ErrConfig)
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
// [ErrNotApproved] or [ErrNotFound]. A refusal spends nothing, with one
// exception: a token the gate's key signed whose digest or nonce is not
// the stored ticket's (the key misused) spends the ticket it names, and
// nothing runs. A crash after Verify leaves the ticket executing:
// [Verifier.Recover] lists it with its idempotency key.
func (v *Verifier) Verify(ctx context.Context, token string, e canon.Effect) (Claims, error) {
	c, signed, err := v.check(token)
	if err != nil {
		if signed {
			return Claims{}, v.refused(ctx, c, e.Tool, err)
		}
		return Claims{}, err
	}
	if v.resolver != nil {
		refs, err := canon.ResolveAll(ctx, v.resolver, e.Refs)
		if err != nil {
			return Claims{}, v.refused(ctx, c, e.Tool,
				fmt.Errorf("verify token: %w: a reference no longer resolves", stepup.ErrEffectChanged))
		}
		e.Refs = refs
	}
	d, err := e.Digest()
	if err != nil || !d.Equal(c.Digest) {
		return Claims{}, v.refused(ctx, c, e.Tool, fmt.Errorf("verify token: %w", stepup.ErrEffectChanged))
	}
	key, err := ticketstore.NewKey()
	if err != nil {
		return Claims{}, fmt.Errorf("verify token: %w", err)
	}
	key = executorKeyPrefix + key
	a, err := v.st.Consume(ctx, string(c.Ticket), key, v.now())
	if err != nil {
		return Claims{}, v.refused(ctx, c, e.Tool, ticketstore.Err("verify token", err))
	}
	// The gate signed digest and nonce from this ticket; a token whose
	// claims differ from the stored ticket was not made by it, so the
	// ticket it just spent stays spent and nothing runs.
	if !a.Digest.Equal(c.Digest) || subtle.ConstantTimeCompare(a.Nonce[:], c.Nonce[:]) != 1 {
		return Claims{}, v.refused(ctx, c, e.Tool,
			fmt.Errorf("verify token: %w: token does not match the stored ticket", stepup.ErrEffectChanged))
	}
	c.IdempotencyKey = a.IdempotencyKey
	return c, nil
}

// refused records the refusal of a token the gate signed, and returns
// refusal (joined with the audit failure, if any).
func (v *Verifier) refused(ctx context.Context, c Claims, tool string, refusal error) error {
	if v.audit == nil {
		return refusal
	}
	now := v.now()
	var r receipt.AuditRecord
	if a, err := v.st.Get(ctx, string(c.Ticket)); err == nil {
		r = executorRecord(a, now)
	} else {
		r = receipt.AuditRecord{Time: now.UnixMilli(), TicketID: string(c.Ticket), Tool: tool,
			ArgsDigest: c.Digest, Approver: c.Approver}
	}
	r.Decision = receipt.DecisionFailed
	r.Reason = "executor " + v.audience + " refused: " + tokenReason(refusal)
	if _, err := v.audit.AppendAudit(context.WithoutCancel(ctx), r); err != nil {
		return errors.Join(refusal, fmt.Errorf("audit: %w: %v", stepup.ErrStore, err))
	}
	return refusal
}

// tokenReason words a refusal for the audit record, from its sentinel.
func tokenReason(err error) string {
	switch {
	case errors.Is(err, stepup.ErrEffectChanged):
		return "action differs from what was approved"
	case errors.Is(err, stepup.ErrConsumed):
		return "approval already used"
	case errors.Is(err, stepup.ErrExpired):
		return "approval expired"
	case errors.Is(err, ErrTokenAudience):
		return "token addressed to another executor"
	case errors.Is(err, ErrTokenIssuer):
		return "token from another issuer"
	case errors.Is(err, stepup.ErrNotApproved):
		return "ticket not approved"
	case errors.Is(err, stepup.ErrNotFound):
		return "unknown ticket"
	case errors.Is(err, ErrTokenMalformed):
		return "token malformed"
	}
	return "store failure"
}

// check verifies the token's signature and claims, not the effect.
// signed reports whether the signature verified, so that c (as far as it
// was read) comes from the gate.
func (v *Verifier) check(token string) (c Claims, signed bool, err error) {
	var tc tokenClaims
	t, err := v.parser.ParseWithClaims(token, &tc, func(t *jwt.Token) (any, error) {
		if _, ok := t.Method.(*jwt.SigningMethodEd25519); !ok {
			return nil, ErrTokenSignature
		}
		return v.pub, nil
	})
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return Claims{}, false, fmt.Errorf("verify token: %w", ErrTokenMalformed)
	case err != nil:
		return Claims{}, false, fmt.Errorf("verify token: %w", ErrTokenSignature)
	case t.Header["typ"] != TokenType:
		// Signed by the gate's key, but for some other purpose.
		return Claims{}, false, fmt.Errorf("verify token: %w: not an execution token", ErrTokenMalformed)
	}
	c = Claims{Ticket: stepup.TicketID(tc.ID), Issuer: tc.Issuer, Approver: tc.Subject}
	c.Digest, _ = canon.ParseDigest(tc.Digest)
	if n, err := hex.DecodeString(tc.Nonce); err == nil && len(n) == len(c.Nonce) {
		copy(c.Nonce[:], n)
	}
	if len(tc.Audience) > 0 {
		c.Audience = tc.Audience[0]
	}
	if tc.IssuedAt != nil {
		c.IssuedAt = tc.IssuedAt.Time
	}
	if tc.ExpiresAt != nil {
		c.ExpiresAt = tc.ExpiresAt.Time
	}
	switch {
	case tc.Issuer != v.issuer:
		return c, true, fmt.Errorf("verify token: %w", ErrTokenIssuer)
	case len(tc.Audience) != 1 || tc.Audience[0] != v.audience:
		return c, true, fmt.Errorf("verify token: %w", ErrTokenAudience)
	case tc.ExpiresAt == nil || tc.IssuedAt == nil:
		return c, true, fmt.Errorf("verify token: %w: no expiry or issue time", ErrTokenMalformed)
	case !v.now().Before(tc.ExpiresAt.Time):
		return c, true, fmt.Errorf("verify token: %w", stepup.ErrExpired)
	case tc.ID == "" || tc.Subject == "":
		return c, true, fmt.Errorf("verify token: %w: no ticket or approver", ErrTokenMalformed)
	case c.Digest.IsZero() || c.Digest.String() != tc.Digest:
		return c, true, fmt.Errorf("verify token: %w: digest claim", ErrTokenMalformed)
	case c.Nonce == ([32]byte{}) && tc.Nonce != strings.Repeat("0", 64):
		return c, true, fmt.Errorf("verify token: %w: nonce claim", ErrTokenMalformed)
	}
	return c, true, nil
}

// Finish records the outcome of the run a [Verifier.Verify] allowed:
// output (JSON, or bytes kept as a base64 string) when runErr is nil, a
// failure otherwise. The ticket moves from executing to done, and with
// [WithVerifierAudit] an executed or failed row joins the audit chain.
// Finishing a ticket twice fails with [ErrStore].
func (v *Verifier) Finish(ctx context.Context, c Claims, output []byte, runErr error) error {
	stored := ticketstore.Result{OK: runErr == nil}
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
		return fmt.Errorf("finish: %w: %v", stepup.ErrStore, err)
	}
	now := v.now()
	done, err := v.st.Finish(context.WithoutCancel(ctx), string(c.Ticket), raw, now)
	if err != nil {
		return ticketstore.Err("finish", err)
	}
	if v.audit == nil {
		return nil
	}
	r := executorRecord(done, now)
	r.Decision, r.Reason, r.Result = receipt.DecisionExecuted, "ran on executor "+v.audience, "ok"
	if runErr != nil {
		r.Decision, r.Result = receipt.DecisionFailed, "executor failed"
	}
	if _, err := v.audit.AppendAudit(context.WithoutCancel(ctx), r); err != nil {
		return fmt.Errorf("finish: audit: %w: %v", stepup.ErrStore, err)
	}
	return nil
}

// executorRecord is the audit row of a ticket an executor finished: what
// the gate's own rows say of a ticket, by digest only.
func executorRecord(a store.Approval, at time.Time) receipt.AuditRecord {
	r := receipt.AuditRecord{
		Time: at.UnixMilli(), TicketID: a.ID, Task: a.Task, Step: a.Step, Session: a.Session,
		Tool: a.Tool, EffectClass: a.EffectClass, ArgsDigest: a.Digest, Principal: a.Requester,
		PolicyVersion: a.PolicyVersion, Taint: a.Taint, Approver: a.Approver, IdempotencyKey: a.IdempotencyKey,
	}
	if a.Nonce != ([32]byte{}) && !a.CardHash.IsZero() {
		r.Nonce = hex.EncodeToString(a.Nonce[:])
		r.CardHash = a.CardHash.String()
	}
	if !a.CreatedAt.IsZero() {
		r.DecisionMillis = at.Sub(a.CreatedAt).Milliseconds()
	}
	return r
}

// executorKeyPrefix marks the idempotency keys of tickets a [Verifier]
// consumed, so that executions interrupted on an executor are told apart
// from those the gate runs itself, which share the store's Recover list.
const executorKeyPrefix = gate.ExternalKeyPrefix

// Interrupted is an execution a crash cut short: a ticket
// [Verifier.Verify] spent whose outcome [Verifier.Finish] never recorded.
type Interrupted struct {
	// Claims are the spent ticket's, with the IdempotencyKey it was
	// consumed with; pass them to Finish.
	Claims Claims
	// Effect is the stored effect, the one that was approved.
	Effect canon.Effect
}

// Recover lists this executor's interrupted executions: tickets addressed
// to its audience that were consumed and never finished, oldest first.
// Re-run each Effect with its Claims.IdempotencyKey (never a new key: a tool
// that honours the key then acts once) and record the outcome with Finish.
// Call it at start-up, before verifying new tokens. A stored effect that
// no longer hashes to its digest is left out and reported in the error,
// wrapping [ErrEffectChanged].
func (v *Verifier) Recover(ctx context.Context) ([]Interrupted, error) {
	list, err := v.st.Recover(ctx)
	if err != nil {
		return nil, ticketstore.Err("recover", err)
	}
	var out []Interrupted
	var errs []error
	for _, a := range list {
		e, err := canon.ParseEffect(a.Effect)
		if err != nil || !canon.Sum(a.Effect).Equal(a.Digest) {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, stepup.ErrEffectChanged))
			continue
		}
		if e.Audience != v.audience || !strings.HasPrefix(a.IdempotencyKey, executorKeyPrefix) {
			continue // another executor's, or the gate's own
		}
		out = append(out, Interrupted{Effect: e, Claims: Claims{
			Ticket: stepup.TicketID(a.ID), Issuer: v.issuer, Audience: v.audience, Approver: a.Approver,
			Digest: a.Digest, Nonce: a.Nonce, ExpiresAt: a.ExpiresAt, IdempotencyKey: a.IdempotencyKey,
		}})
	}
	return out, errors.Join(errs...)
}
