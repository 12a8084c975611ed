package exectoken_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// TestVerifierSeedCases replays the reference program's executor decisions with the
// executor as a separate service: the gate issues a token, the mailer
// verifies it against the call it is about to run.
func TestVerifierSeedCases(t *testing.T) {
	ctx := context.Background()
	approvedCall := sendEmail("finance@example.com")

	t.Run("1 the approved call, keys reordered, executes once", func(t *testing.T) {
		w := newTokenWorld(t)
		tk, tok := w.issued(t, approvedCall)
		claims, err := w.mailer.Verify(ctx, tok, effectOf(reordered(approvedCall)))
		require.NoError(t, err)
		assert.Equal(t, tk.ID, claims.Ticket)
		assert.Equal(t, tk.Digest, claims.Digest)
		assert.Equal(t, stepuptest.Approver, claims.Approver)
		assert.Equal(t, "send_email", claims.Audience)
		assert.Equal(t, tokenIssuerName, claims.Issuer)

		a, err := w.Store.Get(ctx, string(tk.ID))
		require.NoError(t, err)
		assert.Equal(t, store.Executing, a.State, "the ticket is spent in the shared store")
		assert.Equal(t, "exec-"+receipt.IdempotencyKey(a.ID, a.Nonce), claims.IdempotencyKey,
			"the key is the approval's: its ticket and nonce")
		assert.Equal(t, a.IdempotencyKey, claims.IdempotencyKey)
		assert.Equal(t, a.Nonce, claims.Nonce)

		require.NoError(t, w.mailer.Finish(ctx, claims, []byte(`{"sent":true}`), nil))
		got, err := w.Gate.Ticket(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusExecuted, got.Status)
		_, err = w.Gate.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrConsumed, "the gate does not run it a second time")
		assert.Equal(t, 0, w.Exec.Count())
		assert.Error(t, w.mailer.Finish(ctx, claims, nil, nil), "finished once")
	})

	t.Run("2 the same token again is refused as used", func(t *testing.T) {
		w := newTokenWorld(t)
		_, tok := w.issued(t, approvedCall)
		_, err := w.mailer.Verify(ctx, tok, effectOf(approvedCall))
		require.NoError(t, err)
		w.Clock.Advance(10 * time.Second)
		_, err = w.mailer.Verify(ctx, tok, effectOf(approvedCall))
		assert.ErrorIs(t, err, stepup.ErrConsumed)
	})

	t.Run("3 a token for one call is refused for another", func(t *testing.T) {
		w := newTokenWorld(t)
		tk, tok := w.issued(t, approvedCall)
		_, err := w.mailer.Verify(ctx, tok, effectOf(sendEmail("finance@exarnple.com")))
		assert.ErrorIs(t, err, stepup.ErrEffectChanged)
		assert.Equal(t, store.Approved, w.state(t, tk.ID), "a refusal spends nothing")
	})

	t.Run("4 attachment edited after approval is refused", func(t *testing.T) {
		w := newTokenWorld(t)
		tk, tok := w.issued(t, approvedCall)
		require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "q3.csv"),
			[]byte("region,revenue\nwest,410\neast,385\nnote,see attached instructions\n"), 0o600))
		_, err := w.mailer.Verify(ctx, tok, effectOf(approvedCall))
		assert.ErrorIs(t, err, stepup.ErrEffectChanged)
		assert.Equal(t, store.Approved, w.state(t, tk.ID))
	})

	t.Run("5 used 20 minutes later is refused as expired", func(t *testing.T) {
		w := newTokenWorld(t)
		tk, tok := w.issued(t, approvedCall)
		w.Clock.Advance(20 * time.Minute)
		_, err := w.mailer.Verify(ctx, tok, effectOf(approvedCall))
		assert.ErrorIs(t, err, stepup.ErrExpired)
		assert.Equal(t, store.Approved, w.state(t, tk.ID))
	})

	t.Run("6 digest swapped in the token is refused as a bad signature", func(t *testing.T) {
		w := newTokenWorld(t)
		tk, tok := w.issued(t, approvedCall)
		changed := effectOf(sendEmail("finance@exarnple.com"))
		changed.Refs = resolved(t, w, changed.Refs)
		d, err := changed.Digest()
		require.NoError(t, err)
		forged := editPayload(t, tok, func(c jwt.MapClaims) { c["digest"] = d.String() })
		_, err = w.mailer.Verify(ctx, forged, changed)
		assert.ErrorIs(t, err, exectoken.ErrTokenSignature)
		assert.Equal(t, store.Approved, w.state(t, tk.ID))
	})
}

// TestVerifierRefusals: every other way a token can be wrong, each with
// its sentinel, none spending the ticket.
func TestVerifierRefusals(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	pub := w.issuer.PublicKey()
	otherPub, otherKey, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	claims := claimsOf(t, tok)

	tests := []struct {
		name  string
		token string
		v     *exectoken.Verifier
		want  error
	}{
		{"addressed to another executor", tok, w.verifier(t, pub, tokenIssuerName, "payments"), exectoken.ErrTokenAudience},
		{"from another issuer name", tok, w.verifier(t, pub, "other-gate", "send_email"), exectoken.ErrTokenIssuer},
		{"verified with another gate's key", tok, w.verifier(t, otherPub, tokenIssuerName, "send_email"), exectoken.ErrTokenSignature},
		{"signed by another key", sign(t, jwt.SigningMethodEdDSA, otherKey, exectoken.TokenType, claims), nil, exectoken.ErrTokenSignature},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, exectoken.TokenType, claims), nil, exectoken.ErrTokenSignature},
		{"HS256 keyed with the public key", sign(t, jwt.SigningMethodHS256, []byte(pub), exectoken.TokenType, claims), nil, exectoken.ErrTokenSignature},
		{"RS256", sign(t, jwt.SigningMethodRS256, rsaKey, exectoken.TokenType, claims), nil, exectoken.ErrTokenSignature},
		{"ES256", sign(t, jwt.SigningMethodES256, ecKey, exectoken.TokenType, claims), nil, exectoken.ErrTokenSignature},
		{"payload edited", editPayload(t, tok, func(c jwt.MapClaims) { c["exp"] = c["exp"].(float64) + 3600 }), nil, exectoken.ErrTokenSignature},
		{"another JWT of the gate's key", sign(t, jwt.SigningMethodEdDSA, w.key, "JWT", claims), nil, exectoken.ErrTokenMalformed},
		{"not a JWT", "not.a.jwt", nil, exectoken.ErrTokenMalformed},
		{"empty", "", nil, exectoken.ErrTokenMalformed},
		{"no expiry", sign(t, jwt.SigningMethodEdDSA, w.key, exectoken.TokenType, with(claims, "exp", nil)), nil, exectoken.ErrTokenMalformed},
		{"digest not hex", sign(t, jwt.SigningMethodEdDSA, w.key, exectoken.TokenType, with(claims, "digest", "zz")), nil, exectoken.ErrTokenMalformed},
		{"nonce short", sign(t, jwt.SigningMethodEdDSA, w.key, exectoken.TokenType, with(claims, "nonce", "00")), nil, exectoken.ErrTokenMalformed},
		{"two audiences", sign(t, jwt.SigningMethodEdDSA, w.key, exectoken.TokenType,
			with(claims, "aud", []string{"send_email", "payments"})), nil, exectoken.ErrTokenAudience},
		{"expired", sign(t, jwt.SigningMethodEdDSA, w.key, exectoken.TokenType,
			with(claims, "exp", stepuptest.Start().Unix())), nil, stepup.ErrExpired},
		{"unknown ticket", sign(t, jwt.SigningMethodEdDSA, w.key, exectoken.TokenType, with(claims, "jti", "no-such-ticket")), nil, stepup.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			if v == nil {
				v = w.mailer
			}
			got, err := v.Verify(ctx, tt.token, effectOf(call))
			assert.ErrorIs(t, err, tt.want)
			assert.Zero(t, got)
			assert.Equal(t, store.Approved, w.state(t, tk.ID), "a refused token spends nothing")
		})
	}

	// The real token still works after all of that, once.
	_, err = w.mailer.Verify(ctx, tok, effectOf(call))
	require.NoError(t, err)
}

// TestVerifierRefusesATokenThatDisagreesWithTheTicket: a token the gate's
// key signed whose nonce is not the stored ticket's (the key misused, or a
// second gate with the same key and another store) runs nothing.
func TestVerifierRefusesATokenThatDisagreesWithTheTicket(t *testing.T) {
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	forged := sign(t, jwt.SigningMethodEdDSA, w.key, exectoken.TokenType,
		with(claimsOf(t, tok), "nonce", strings.Repeat("ab", 32)))
	_, err := w.mailer.Verify(context.Background(), forged, effectOf(call))
	assert.ErrorIs(t, err, stepup.ErrEffectChanged)
	assert.Equal(t, store.Executing, w.state(t, tk.ID), "the ticket it reached stays spent: fail closed")
}

// TestAlgorithmConfusionAgainstANaiveVerifier shows the HS256 forgery
// succeeding against a verifier that hands out its key in whatever form
// the token's header asks for, and failing against stepup.Verifier.
func TestAlgorithmConfusionAgainstANaiveVerifier(t *testing.T) {
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	_, tok := w.issued(t, call)
	pub := w.issuer.PublicKey()
	// The attacker knows the public key and wants the mail sent elsewhere.
	other := effectOf(sendEmail("finance@exarnple.com"))
	other.Refs = resolved(t, w, other.Refs)
	d, err := other.Digest()
	require.NoError(t, err)
	forged := sign(t, jwt.SigningMethodHS256, []byte(pub), exectoken.TokenType, with(claimsOf(t, tok), "digest", d.String()))

	naive := func(token string) error {
		_, err := jwt.Parse(token, func(t *jwt.Token) (any, error) {
			if _, ok := t.Method.(*jwt.SigningMethodHMAC); ok {
				return []byte(pub), nil
			}
			return pub, nil
		}, jwt.WithTimeFunc(w.Clock.Now))
		return err
	}
	require.NoError(t, naive(tok), "the naive verifier accepts genuine tokens")
	assert.NoError(t, naive(forged), "and the forgery: the attack works against it")

	_, err = w.mailer.Verify(context.Background(), forged, other)
	assert.ErrorIs(t, err, exectoken.ErrTokenSignature)
}

// TestVerifierSpendsATicketOnce: many executors racing with one token, and
// the gate's own Execute, run the call once between them.
func TestVerifierSpendsATicketOnce(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)

	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n+1)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = w.mailer.Verify(ctx, tok, effectOf(call))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errs[n] = w.Gate.Execute(ctx, tk.ID)
	}()
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		assert.ErrorIs(t, err, stepup.ErrConsumed)
	}
	assert.Equal(t, 1, ok)
}

// TestNewVerifierConfig refuses unusable configurations up front.
func TestNewVerifierConfig(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	st := memory.New(nil)
	t.Cleanup(func() { _ = st.Close() })
	g := stepuptest.NewGate(t, nil).Gate
	tests := []struct {
		name     string
		pub      ed25519.PublicKey
		iss, aud string
		st       exectoken.Store
		check    exectoken.Checker
		opts     []exectoken.VerifierOption
	}{
		{"short key", pub[:16], "g", "mailer", st, g, nil},
		{"no issuer", pub, "", "mailer", st, g, nil},
		{"no audience", pub, "g", "", st, g, nil},
		{"no store", pub, "g", "mailer", nil, g, nil},
		{"no checker", pub, "g", "mailer", st, nil, nil},
		{"zero lease", pub, "g", "mailer", st, g, []exectoken.VerifierOption{exectoken.WithVerifierLease(0)}},
		{"nil resolver", pub, "g", "mailer", st, g, []exectoken.VerifierOption{exectoken.WithVerifierResolver(nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := exectoken.NewVerifier(tt.pub, tt.iss, tt.aud, tt.st, tt.check, tt.opts...)
			assert.ErrorIs(t, err, stepup.ErrConfig)
			assert.Nil(t, v)
		})
	}
}

// TestVerifierErrorsQuoteNothing: refusals never carry the token or the
// arguments.
func TestVerifierErrorsQuoteNothing(t *testing.T) {
	w := newTokenWorld(t)
	_, tok := w.issued(t, sendEmail("finance@example.com"))
	for _, e := range []canon.Effect{effectOf(sendEmail("secret-recipient@example.com"))} {
		_, err := w.mailer.Verify(context.Background(), tok, e)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "secret-recipient")
		assert.NotContains(t, err.Error(), tok[:20])
	}
	_, err := w.mailer.Verify(context.Background(), tok[:len(tok)-4]+"AAAA", effectOf(sendEmail("finance@example.com")))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok[:20])
}

// TestVerifierAudit: the executor's refusals of the gate's tokens, its
// spending of a ticket and its outcomes join the gate's audit chain, and
// forgeries add nothing.
func TestVerifierAudit(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	audited, err := exectoken.NewVerifier(w.issuer.PublicKey(), tokenIssuerName, "send_email", w.Store, w.Gate,
		exectoken.WithVerifierResolver(canon.FileResolver{Root: w.Dir}))
	require.NoError(t, err)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	rows := func() []audit.Record {
		r, err := w.Store.AuditByTask(ctx, "t-42")
		require.NoError(t, err)
		return r
	}
	before := len(rows())

	_, otherKey, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_, err = audited.Verify(ctx, sign(t, jwt.SigningMethodEdDSA, otherKey, exectoken.TokenType, claimsOf(t, tok)), effectOf(call))
	require.ErrorIs(t, err, exectoken.ErrTokenSignature)
	assert.Len(t, rows(), before, "forgeries add no rows")

	_, err = audited.Verify(ctx, tok, effectOf(sendEmail("finance@exarnple.com")))
	require.ErrorIs(t, err, stepup.ErrEffectChanged)
	got := rows()
	require.Len(t, got, before+1)
	refusal := got[len(got)-1]
	assert.Equal(t, audit.DecisionNotRun, refusal.Decision)
	assert.Equal(t, string(tk.ID), refusal.TicketID)
	assert.Equal(t, tk.Digest, refusal.ArgsDigest)
	assert.Equal(t, "executor send_email refused: action differs from what was approved", refusal.Reason)

	claims, err := audited.Verify(ctx, tok, effectOf(call))
	require.NoError(t, err)
	require.NoError(t, audited.Finish(ctx, claims, []byte(`{"sent":true}`), nil))
	_, err = audited.Verify(ctx, tok, effectOf(call))
	require.ErrorIs(t, err, stepup.ErrConsumed)
	got = rows()
	require.Len(t, got, before+4)
	spent, ran, replay := got[len(got)-3], got[len(got)-2], got[len(got)-1]
	assert.Equal(t, audit.DecisionExecuting, spent.Decision)
	assert.Equal(t, claims.IdempotencyKey, spent.IdempotencyKey)
	assert.Equal(t, audit.DecisionExecuted, ran.Decision)
	assert.Equal(t, claims.IdempotencyKey, ran.IdempotencyKey)
	assert.Equal(t, stepuptest.Approver, ran.Approver)
	assert.Equal(t, "t-42", ran.Task)
	assert.Equal(t, "executor send_email refused: approval already used", replay.Reason)
	assert.Equal(t, audit.DecisionNotRun, replay.Decision)

	// A spent token replayed in a loop adds no more rows.
	for range 200 {
		_, err = audited.Verify(ctx, tok, effectOf(call))
		require.ErrorIs(t, err, stepup.ErrConsumed)
	}
	require.Len(t, rows(), before+4, "200 replays of a spent token add no row")

	all, err := w.Store.AuditRange(ctx, time.Time{}, w.Clock.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.NoError(t, audit.VerifyChain(all, canon.Digest{}), "one chain with the gate's rows")
	assert.NotContains(t, refusal.Reason, "exarnple")
}

// TestVerifierRecoversItsInterruptedRuns: an executor that crashed after
// Verify finds the run again with the same idempotency key, never a second
// consume; the gate's own executions and other executors' are not its.
func TestVerifierRecoversItsInterruptedRuns(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	_, tok := w.issued(t, call)
	claims, err := w.mailer.Verify(ctx, tok, effectOf(call))
	require.NoError(t, err)
	// The gate runs another send_email ticket in-process, and a crash
	// interrupts it too.
	own := approved(t, w.Harness, sendEmail("cfo@example.com"))
	_, err = w.Store.Consume(ctx, string(own.ID), store.Claim{Key: "gate-key", Owner: "gate-1", At: w.Clock.Now(),
		LeaseUntil: w.Clock.Now().Add(time.Second)}, nil)
	require.NoError(t, err)

	restarted := w.verifier(t, w.issuer.PublicKey(), tokenIssuerName, "send_email")
	payments := w.verifier(t, w.issuer.PublicKey(), tokenIssuerName, "payments")
	got, err := restarted.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "the executor's lease is live: nothing is taken over")
	w.Clock.Advance(exectoken.DefaultExecutorLease)
	none, err := payments.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, none)
	got, err = restarted.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "expired, but not yet watched for a lease of the verifier's own clock")
	w.Clock.Advance(exectoken.DefaultExecutorLease)

	got, err = restarted.Recover(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1, "only the mailer's own run")
	assert.Equal(t, claims.Ticket, got[0].Claims.Ticket)
	assert.Equal(t, claims.IdempotencyKey, got[0].Claims.IdempotencyKey)
	assert.Equal(t, claims.Digest, got[0].Claims.Digest)
	d, err := got[0].Effect.Digest()
	require.NoError(t, err)
	assert.Equal(t, claims.Digest, d, "the stored, approved effect")

	require.NoError(t, restarted.Finish(ctx, got[0].Claims, []byte(`{"sent":true}`), nil))
	got, err = restarted.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = restarted.Verify(ctx, tok, effectOf(call))
	assert.Error(t, err, "spent, and by now the token expired too")
}

// FuzzVerifierVerify: Verify never panics, and accepts no token but the
// one the gate issued, however it is mutated.
func FuzzVerifierVerify(f *testing.F) {
	ctx := context.Background()
	h := stepuptest.NewGate(f, nil)
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(f, err)
	issuer, err := exectoken.NewTokenIssuer(h.Gate, key, tokenIssuerName)
	require.NoError(f, err)
	v, err := exectoken.NewVerifier(pub, tokenIssuerName, "read_file", h.Store, h.Gate)
	require.NoError(f, err)
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Task: "t-42", Session: "sess-1", Principal: agentFor("user:dana")}
	tk, err := h.Gate.Propose(ctx, call)
	require.NoError(f, err)
	tok, err := issuer.Issue(ctx, tk.ID)
	require.NoError(f, err)
	effect := canon.Effect{Tool: call.Tool, Args: call.Args, Task: call.Task, Principal: call.Principal,
		PolicyVersion: stepuptest.SeedPolicyVersion, Audience: "read_file"}

	parts := strings.Split(tok, ".")
	f.Add(tok[:len(tok)-1])
	f.Add(parts[0] + "." + parts[1] + ".")
	f.Add(parts[0] + ".." + parts[2])
	f.Add(`eyJhbGciOiJub25lIiwidHlwIjoiYXN1LWV4ZWMrand0In0.` + parts[1] + ".")
	f.Add(strings.ToUpper(tok))
	f.Add(tok + "=")
	f.Fuzz(func(t *testing.T, s string) {
		if s == tok {
			return // the genuine token; spending it is not the point here
		}
		c, err := v.Verify(ctx, s, effect)
		if err == nil {
			t.Fatalf("accepted a token that the gate did not issue (ticket %s)", c.Ticket)
		}
	})
}

// claimsOf decodes a token's claims without verifying it.
func claimsOf(t *testing.T, tok string) jwt.MapClaims {
	t.Helper()
	c := jwt.MapClaims{}
	_, _, err := jwt.NewParser().ParseUnverified(tok, c)
	require.NoError(t, err)
	return c
}

// with returns a copy of c with key set to v (deleted when v is nil).
func with(c jwt.MapClaims, key string, v any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, x := range c {
		out[k] = x
	}
	if v == nil {
		delete(out, key)
	} else {
		out[key] = v
	}
	return out
}

// sign makes a token with any method, key and typ.
func sign(t *testing.T, m jwt.SigningMethod, key any, typ string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	tok.Header["typ"] = typ
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// editPayload rewrites a token's claims and keeps its header and signature.
func editPayload(t *testing.T, tok string, edit func(jwt.MapClaims)) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	c := claimsOf(t, tok)
	edit(c)
	raw, err := json.Marshal(c)
	require.NoError(t, err)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + parts[2]
}

// resolved resolves refs against the world's files, as an attacker
// computing a digest would.
func resolved(t *testing.T, w *tokenWorld, refs []canon.Ref) []canon.Ref {
	t.Helper()
	out, err := canon.ResolveAll(context.Background(), canon.FileResolver{Root: w.Dir}, refs)
	require.NoError(t, err)
	return out
}

func ExampleVerifier_Verify() {
	g, st, _, id, effect := tokenExample()
	ctx := context.Background()
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	issuer, _ := exectoken.NewTokenIssuer(g, key, "gate.example.com")
	token, _ := issuer.Issue(ctx, id)

	// In the mailer service, which shares the gate's store and knows the
	// gate's public key, with a gate of its own over that store and the
	// same policy, to refuse what Execute refuses:
	mailer, err := exectoken.NewVerifier(pub, "gate.example.com", "send_email", st, g)
	if err != nil {
		panic(err)
	}
	other := effect
	other.Args = json.RawMessage(`{"to":"finance@exarnple.com"}`)
	_, err = mailer.Verify(ctx, token, other)
	fmt.Println(err)

	claims, err := mailer.Verify(ctx, token, effect)
	fmt.Println(claims.Approver, len(claims.IdempotencyKey) > 0, err)
	// ... run the tool with claims.IdempotencyKey, then record the outcome:
	_ = mailer.Finish(ctx, claims, []byte(`{"sent":true}`), nil)

	_, err = mailer.Verify(ctx, token, effect)
	fmt.Println(err)
	// Output:
	// verify token: stepup: action differs from what was approved
	// user:dana true <nil>
	// verify token: runnable: stepup: approval already used
}

// BenchmarkVerifierVerify measures an executor's whole check of one token
// (JWT decoding, the EdDSA signature, claims, the digest of the effect and
// the consume on store/memory) beside the one ed25519.Verify it contains.
func BenchmarkVerifierVerify(b *testing.B) {
	ctx := context.Background()
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"reports/2026/q3.csv"}`),
		Task: "t-42", Step: "s-1", Session: "sess-1", Principal: agentFor("user:dana")}
	effect := canon.Effect{Tool: call.Tool, Args: call.Args, Task: call.Task, Step: call.Step,
		Principal: call.Principal, PolicyVersion: stepuptest.SeedPolicyVersion, Audience: "read_file"}
	// setup returns a verifier on a fresh store/memory gate and n tokens for
	// n tickets the policy allowed, with the garbage of making them
	// collected.
	setup := func(b *testing.B, n int) (*exectoken.Verifier, ed25519.PublicKey, []string) {
		b.Helper()
		h := stepuptest.NewGate(b, nil)
		pub, key, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(b, err)
		issuer, err := exectoken.NewTokenIssuer(h.Gate, key, tokenIssuerName)
		require.NoError(b, err)
		v, err := exectoken.NewVerifier(pub, tokenIssuerName, "read_file", h.Store, h.Gate)
		require.NoError(b, err)
		toks := make([]string, n)
		for i := range toks {
			tk, err := h.Gate.Propose(ctx, call)
			require.NoError(b, err)
			toks[i], err = issuer.Issue(ctx, tk.ID)
			require.NoError(b, err)
		}
		runtime.GC()
		return v, pub, toks
	}

	b.Run("baseline=ed25519.Verify", func(b *testing.B) {
		_, pub, toks := setup(b, 1)
		dot := strings.LastIndexByte(toks[0], '.')
		msg := []byte(toks[0][:dot])
		sig, err := base64.RawURLEncoding.DecodeString(toks[0][dot+1:])
		require.NoError(b, err)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if !ed25519.Verify(pub, msg, sig) {
				b.Fatal("signature does not verify")
			}
		}
	})
	b.Run("Verifier.Verify", func(b *testing.B) {
		v, _, toks := setup(b, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := v.Verify(ctx, toks[i], effect); err != nil {
				b.Fatal(err)
			}
		}
	})
}
