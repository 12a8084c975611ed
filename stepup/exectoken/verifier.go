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

	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/plug"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentstepup/asu/audit"
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
	// token's shape: longer than [MaxTokenSize], a byte outside
	// base64url and the dots, bad encoding, wrong "typ", a claim missing
	// or ill-formed.
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
	pub      ed25519.PublicKey    // the one key of NewVerifier
	keys     keyring.PublicSource // the ring of NewVerifierRing, instead of pub
	issuer   string
	audience string
	st       Store
	checker  Checker
	local    func() time.Time // this process's clock; see WithVerifierLocalClock

	watch    ticketstore.Watch      // expired executions Recover has seen
	refusals ticketstore.RefusalLog // refusals written, so repeats are counted, not written
	lease    time.Duration
	resolver canon.Resolver
	parser   *jwt.Parser
}

// Checker says whether a ticket may run now, with the checks
// [gate.Gate.Execute] makes before it spends an approval: the current
// policy still allows it under the version it was decided under, the
// approval's evidence still verifies (its passkey not revoked, its grant
// standing), it is not revoked or expired, and its references resolve to
// what was approved. A *gate.Gate over the same store, policy and
// approver is one.
//
// Before [Verifier.Recover] hands back a run a crash interrupted, it asks
// Holds whether the spent approval still stands, as [gate.Gate.Recover]
// does before it runs one again.
type Checker interface {
	Runnable(ctx context.Context, id stepup.TicketID) (plug.Runnable, error)
	Holds(ctx context.Context, id stepup.TicketID) error
}

// Store is what a [Verifier] uses of the store it shares with the gate:
// its clock, the tickets it spends under a lease, and the audit chain its
// decisions join. Every backend in store/ implements it.
type Store interface {
	store.Clock
	Get(ctx context.Context, id string) (store.Approval, error)
	Consume(ctx context.Context, id string, c store.Claim, note store.Note) (store.Approval, error)
	Finish(ctx context.Context, id string, fence int64, o store.Outcome, note store.Note) (store.Approval, error)
	Expired(ctx context.Context, at time.Time, limit int) ([]store.Approval, error)
	Reclaim(ctx context.Context, id string, fence int64, c store.Claim, note store.Note) (store.Approval, error)
	AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error)
}

// DefaultExecutorLease is how long an executor holds a ticket it spent
// before [Verifier.Recover] may take it over, when [WithVerifierLease]
// does not say: Finish within it.
const DefaultExecutorLease = 5 * time.Minute

// VerifierOption configures a [Verifier].
type VerifierOption func(*Verifier) error

// WithVerifierLease sets how long the executor holds a ticket it spent
// (default [DefaultExecutorLease]); run and [Verifier.Finish] within it.
func WithVerifierLease(d time.Duration) VerifierOption {
	return func(v *Verifier) error {
		if d <= 0 {
			return fmt.Errorf("%w: lease must be positive", stepup.ErrConfig)
		}
		v.lease = d
		return nil
	}
}

// WithVerifierLocalClock sets this process's clock, on which Recover
// measures how long it watched an expired execution (default time.Now,
// whose monotonic reading no step of a wall clock moves). For tests.
func WithVerifierLocalClock(now func() time.Time) VerifierOption {
	return func(v *Verifier) error {
		if now == nil {
			return fmt.Errorf("%w: nil local clock", stepup.ErrConfig)
		}
		v.local = now
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

// NewVerifier returns the verifier of tokens that issuer signed with the
// private half of pub and addressed to audience (this executor's name, the
// Audience of the effects it runs), spending tickets in st, the store the
// gate uses. check is asked, as each token is spent, whether its ticket
// may still run: a token proves what was approved when it was issued, and
// an approval revoked, or decided under a policy the gates no longer run,
// since then is refused as Execute refuses it.
func NewVerifier(pub ed25519.PublicKey, issuer, audience string, st Store, check Checker, opts ...VerifierOption) (*Verifier, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: verifier needs an Ed25519 public key", stepup.ErrConfig)
	}
	return newVerifier(pub, nil, issuer, audience, st, check, opts)
}

func newVerifier(pub ed25519.PublicKey, keys keyring.PublicSource, issuer, audience string, st Store, check Checker, opts []VerifierOption) (*Verifier, error) {
	switch {
	case issuer == "" || audience == "":
		return nil, fmt.Errorf("%w: verifier needs an issuer and an audience", stepup.ErrConfig)
	case st == nil:
		return nil, fmt.Errorf("%w: verifier needs the gate's store", stepup.ErrConfig)
	case check == nil:
		return nil, fmt.Errorf("%w: verifier needs a Checker (a gate) to refuse what Execute refuses", stepup.ErrConfig)
	}
	v := &Verifier{
		pub: append(ed25519.PublicKey{}, pub...), keys: keys, issuer: issuer, audience: audience, st: st, checker: check,
		lease: DefaultExecutorLease, local: time.Now,
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
// nothing runs. The refusal of a token the gate signed is a
// audit.DecisionNotRun row in the audit chain; identical refusals of
// one ticket within an hour are counted, not written. A store failure is
// no refusal: it wraps [stepup.ErrStore], writes nothing, and the same
// Verify may be tried again. A crash after Verify leaves the ticket
// executing: [Verifier.Recover] lists it with its idempotency key.
func (v *Verifier) Verify(ctx context.Context, token string, e canon.Effect) (Claims, error) {
	if err := spelled(token); err != nil {
		return Claims{}, err // before the store is asked anything
	}
	now, err := v.st.Now(ctx)
	if err != nil {
		return Claims{}, fmt.Errorf("verify token: %w: the store's clock: %v", stepup.ErrStore, err)
	}
	c, signed, err := v.check(token, now)
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
	// What the token proves was approved at issue; whether it may still
	// run is asked now, as Execute asks before it spends an approval.
	run, err := v.checker.Runnable(ctx, c.Ticket)
	if err != nil {
		return Claims{}, v.refused(ctx, c, e.Tool, fmt.Errorf("verify token: %w", err))
	}
	if !run.Digest.Equal(c.Digest) {
		return Claims{}, v.refused(ctx, c, e.Tool, fmt.Errorf("verify token: %w: token does not match the stored ticket", stepup.ErrEffectChanged))
	}
	// The key is the approval's (its ticket and nonce, which the token
	// carries and the stored ticket is checked against below), so every
	// run of it carries the same one.
	key := executorKeyPrefix + receipt.IdempotencyKey(string(c.Ticket), c.Nonce)
	at, err := v.st.Now(ctx)
	if err != nil {
		return Claims{}, fmt.Errorf("verify token: %w: the store's clock: %v", stepup.ErrStore, err)
	}
	a, err := v.st.Consume(context.WithoutCancel(ctx), string(c.Ticket), store.Claim{Key: key, Owner: v.owner(), At: at,
		LeaseUntil: at.Add(v.lease)}, func(t store.Approval, _ bool) audit.Record {
		r := executorRecord(t, at)
		r.Decision, r.Reason = audit.DecisionExecuting, "approval spent by executor "+v.audience
		return r
	})
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
	c.IdempotencyKey, c.Fence = a.IdempotencyKey, a.Fence
	return c, nil
}

// owner is the owner recorded on the tickets this executor spends.
func (v *Verifier) owner() string { return "executor:" + v.audience }

// refused records the refusal of a token the gate signed, and returns
// refusal (joined with the audit failure, if any).
func (v *Verifier) refused(ctx context.Context, c Claims, tool string, refusal error) error {
	if transient(refusal) {
		return refusal // nothing is known about the token: no row, and it may be tried again
	}
	now, err := v.st.Now(ctx)
	if err != nil {
		return errors.Join(refusal, fmt.Errorf("audit: %w: %v", stepup.ErrStore, err))
	}
	var (
		r     audit.Record
		state store.State
	)
	if a, err := v.st.Get(ctx, string(c.Ticket)); err == nil {
		r, state = executorRecord(a, now), a.State
	} else {
		r = audit.Record{Time: now.UnixMilli(), TicketID: string(c.Ticket), Tool: tool,
			ArgsDigest: c.Digest, Approver: c.Approver}
	}
	r.Decision = audit.DecisionNotRun
	r.Reason = "executor " + v.audience + " refused: " + tokenReason(refusal)
	// A token replayed in a loop grows the chain by one row per ticket,
	// state, reason and window, not one per try.
	write, repeats := v.refusals.Admit(string(c.Ticket), state, r.Reason, now)
	if !write {
		return refusal
	}
	if repeats > 0 {
		r.Reason = fmt.Sprintf("%s (and %d identical refusals since the last row)", r.Reason, repeats)
	}
	if _, err := v.st.AppendAudit(context.WithoutCancel(ctx), r); err != nil {
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

// spelled refuses, before anything decodes it, a token longer than
// [MaxTokenSize] or holding a byte outside the compact form's alphabet:
// base64url without padding, and the dots between the segments.
// encoding/base64 skips CR and LF wherever they are, so without this one
// token has any number of spellings that verify, and whatever is keyed on
// a token's text (a cache of tokens seen, a deny-list, a log search) is
// bypassed by a respelling.
func spelled(token string) error {
	if len(token) > MaxTokenSize {
		return fmt.Errorf("verify token: %w: longer than %d bytes", ErrTokenMalformed, MaxTokenSize)
	}
	for i := range len(token) {
		switch c := token[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return fmt.Errorf("verify token: %w: a byte outside base64url and the dots", ErrTokenMalformed)
		}
	}
	return nil
}

// check verifies the token's signature and claims, not the effect.
// signed reports whether the signature verified, so that c (as far as it
// was read) comes from the gate.
func (v *Verifier) check(token string, now time.Time) (c Claims, signed bool, err error) {
	if err := spelled(token); err != nil {
		return Claims{}, false, err // no parser reads a token not spelled as issued
	}
	var (
		tc     tokenClaims
		keyErr error // why the key the token names does not verify
	)
	t, err := v.parser.ParseWithClaims(token, &tc, func(t *jwt.Token) (any, error) {
		if _, ok := t.Method.(*jwt.SigningMethodEd25519); !ok {
			return nil, ErrTokenSignature
		}
		var pub any
		pub, keyErr = v.key(t, now)
		return pub, keyErr
	})
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return Claims{}, false, fmt.Errorf("verify token: %w", ErrTokenMalformed)
	case err != nil && keyErr != nil:
		return Claims{}, false, fmt.Errorf("verify token: %w: %w", ErrTokenSignature, keyErr)
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
	case !now.Before(tc.ExpiresAt.Time):
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
	wctx := context.WithoutCancel(ctx)
	now, err := v.st.Now(wctx)
	if err != nil {
		return fmt.Errorf("finish: %w: the store's clock: %v", stepup.ErrStore, err)
	}
	o := store.Outcome{State: store.Done, Result: raw, At: now}
	decision, result := audit.DecisionExecuted, "ok"
	if runErr != nil {
		o.State, decision, result = store.Failed, audit.DecisionFailed, "executor failed"
	}
	_, err = v.st.Finish(wctx, string(c.Ticket), c.Fence, o, func(t store.Approval, _ bool) audit.Record {
		r := executorRecord(t, now)
		r.Decision, r.Reason, r.Result = decision, "ran on executor "+v.audience, result
		return r
	})
	if err != nil {
		if errors.Is(err, store.ErrFenced) {
			return fmt.Errorf("finish: %w: the lease expired and the ticket was taken over", stepup.ErrOutcomeUnknown)
		}
		return ticketstore.Err("finish", err)
	}
	return nil
}

// executorRecord is the audit row of a ticket an executor finished: what
// the gate's own rows say of a ticket, by digest only.
func executorRecord(a store.Approval, at time.Time) audit.Record {
	r := audit.Record{
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
const executorKeyPrefix = plug.ExternalKeyPrefix

// Interrupted is an execution a crash cut short: a ticket
// [Verifier.Verify] spent whose outcome [Verifier.Finish] never recorded.
type Interrupted struct {
	// Claims are the spent ticket's, with the IdempotencyKey it was
	// consumed with; pass them to Finish.
	Claims Claims
	// Effect is the stored effect, the one that was approved.
	Effect canon.Effect
}

// abandon finishes an interrupted execution whose approval no longer
// stands: it is recorded abandoned, never run again, and cause returned.
func (v *Verifier) abandon(ctx context.Context, a store.Approval, now time.Time, cause error) error {
	cause = fmt.Errorf("recover %s: %w", a.ID, cause)
	claimed, err := v.st.Reclaim(ctx, a.ID, a.Fence, store.Claim{Key: a.IdempotencyKey, Owner: v.owner(), At: now,
		LeaseUntil: now.Add(v.lease)}, nil)
	if err != nil {
		return errors.Join(cause, ticketstore.Err("reclaim", err))
	}
	_, err = v.st.Finish(ctx, a.ID, claimed.Fence, store.Outcome{State: store.Abandoned, At: now},
		func(t store.Approval, _ bool) audit.Record {
			r := executorRecord(t, now)
			r.Decision, r.Reason, r.Result = audit.DecisionAbandoned, "the approval no longer stands; not run again", "not run"
			return r
		})
	if err != nil {
		return errors.Join(cause, ticketstore.Err("finish", err))
	}
	return cause
}

// Recover lists this executor's interrupted executions: tickets addressed
// to its audience that were consumed and never finished, oldest first.
// Re-run each Effect with its Claims.IdempotencyKey (never a new key: a tool
// that honours the key then acts once) and record the outcome with Finish.
// Call it at start-up, before verifying new tokens, and then every so
// often: an execution is handed back only once this verifier has watched
// it stay expired for a whole lease of its own clock, so that a step of
// the database's clock never hands back a run its owner may still be
// running. A stored effect that no longer hashes to its digest is left
// out and reported in the error, wrapping [ErrEffectChanged]; one whose
// approval no longer stands ([Checker]'s Holds: its passkey revoked, say)
// is recorded abandoned and reported too.
func (v *Verifier) Recover(ctx context.Context) ([]Interrupted, error) {
	now, err := v.st.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("recover: %w: the store's clock: %v", stepup.ErrStore, err)
	}
	list, err := v.st.Expired(ctx, now, 0)
	if err != nil {
		return nil, ticketstore.Err("recover", err)
	}
	var out []Interrupted
	var errs []error
	seen := map[string]bool{}
	defer v.watch.Forget(seen)
	for _, a := range list {
		s, err := canon.ParseSealed(a.Effect)
		if err != nil || !s.Digest().Equal(a.Digest) {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, stepup.ErrEffectChanged))
			continue
		}
		e := s.Effect()
		if e.Audience != v.audience || !strings.HasPrefix(a.IdempotencyKey, executorKeyPrefix) {
			continue // another executor's, or the gate's own
		}
		seen[a.ID] = true
		if !v.watch.Unrenewed(a, v.local(), v.lease) {
			continue // watched for less than a lease of this process's own time
		}
		if err := v.checker.Holds(ctx, stepup.TicketID(a.ID)); transient(err) {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, err)) // asked again at the next Recover
			continue
		} else if err != nil {
			errs = append(errs, v.abandon(ctx, a, now, err))
			continue
		}
		claimed, err := v.st.Reclaim(ctx, a.ID, a.Fence, store.Claim{Key: a.IdempotencyKey, Owner: v.owner(), At: now,
			LeaseUntil: now.Add(v.lease)}, func(t store.Approval, _ bool) audit.Record {
			r := executorRecord(t, now)
			r.Decision, r.Reason = audit.DecisionReclaimed, "lease expired; executor "+v.audience+" runs it again with the same key"
			return r
		})
		if errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrLeaseLive) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, ticketstore.Err("reclaim", err)))
			continue
		}
		out = append(out, Interrupted{Effect: e, Claims: Claims{
			Ticket: stepup.TicketID(a.ID), Issuer: v.issuer, Audience: v.audience, Approver: a.Approver,
			Digest: a.Digest, Nonce: a.Nonce, ExpiresAt: a.ExpiresAt, IdempotencyKey: claimed.IdempotencyKey,
			Fence: claimed.Fence,
		}})
	}
	return out, errors.Join(errs...)
}
