package exectoken_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// tokenIssuerName is the issuer name of the gates in these tests.
const tokenIssuerName = "gate.example.com"

// tokenWorld is the reference program's world with the mailer as a separate service:
// the gate issues tokens, the mailer verifies them on the same store.
type tokenWorld struct {
	*world
	key    ed25519.PrivateKey
	issuer *exectoken.TokenIssuer
	mailer *exectoken.Verifier
}

func newTokenWorld(t *testing.T) *tokenWorld {
	t.Helper()
	w := newWorld(t)
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	ti, err := exectoken.NewTokenIssuer(w.Gate, key, tokenIssuerName)
	require.NoError(t, err)
	require.Equal(t, pub, ti.PublicKey())
	v, err := exectoken.NewVerifier(pub, tokenIssuerName, "send_email", w.Store, w.Gate, exectoken.WithVerifierResolver(canon.FileResolver{Root: w.Dir}),
		exectoken.WithVerifierLocalClock(w.Clock.Now))
	require.NoError(t, err)
	return &tokenWorld{world: w, key: key, issuer: ti, mailer: v}
}

// verifier returns another executor's verifier on the same store.
func (w *tokenWorld) verifier(t *testing.T, pub ed25519.PublicKey, issuer, audience string) *exectoken.Verifier {
	t.Helper()
	v, err := exectoken.NewVerifier(pub, issuer, audience, w.Store, w.Gate, exectoken.WithVerifierResolver(canon.FileResolver{Root: w.Dir}),
		exectoken.WithVerifierLocalClock(w.Clock.Now))
	require.NoError(t, err)
	return v
}

// issued proposes c, approves it and issues its token.
func (w *tokenWorld) issued(t *testing.T, c stepup.Call) (stepup.Ticket, string) {
	t.Helper()
	tk := approved(t, w.Harness, c)
	tok, err := w.issuer.Issue(context.Background(), tk.ID)
	require.NoError(t, err)
	return tk, tok
}

// effectOf is the effect the executor is asked to run for c: built from
// the call as the runtime forwards it, references unresolved (the
// verifier resolves them itself).
func effectOf(c stepup.Call) canon.Effect {
	var args struct {
		Attachment string `json:"attachment"`
	}
	_ = json.Unmarshal(c.Args, &args)
	e := canon.Effect{Tool: c.Tool, Args: c.Args, Task: c.Task, Step: c.Step, Principal: c.Principal,
		PolicyVersion: stepuptest.SeedPolicyVersion, Audience: c.Tool}
	if args.Attachment != "" {
		e.Refs = []canon.Ref{{Name: args.Attachment, Kind: "file"}}
	}
	return e
}

func (w *tokenWorld) state(t *testing.T, id stepup.TicketID) store.State {
	t.Helper()
	a, err := w.Store.Get(context.Background(), string(id))
	require.NoError(t, err)
	return a.State
}

// TestTokenClaims reads an issued token's claims as the brief fixes them.
func TestTokenClaims(t *testing.T) {
	w := newTokenWorld(t)
	tk, tok := w.issued(t, sendEmail("finance@example.com"))
	a, err := w.Store.Get(context.Background(), string(tk.ID))
	require.NoError(t, err)

	claims := jwt.MapClaims{}
	parsed, err := jwt.NewParser(jwt.WithTimeFunc(w.Clock.Now)).ParseWithClaims(tok, claims,
		func(*jwt.Token) (any, error) { return w.issuer.PublicKey(), nil })
	require.NoError(t, err)
	assert.Equal(t, "EdDSA", parsed.Header["alg"])
	assert.Equal(t, exectoken.TokenType, parsed.Header["typ"])
	assert.Equal(t, string(tk.ID), claims["jti"])
	assert.Equal(t, tokenIssuerName, claims["iss"])
	assert.Equal(t, []any{"send_email"}, claims["aud"])
	assert.Equal(t, stepuptest.Approver, claims["sub"])
	assert.Equal(t, float64(stepuptest.Start().Unix()), claims["iat"])
	assert.Equal(t, float64(stepuptest.Start().Add(exectoken.DefaultTokenTTL).Unix()), claims["exp"])
	assert.Equal(t, tk.Digest.String(), claims["digest"])
	assert.Len(t, claims["nonce"], 64)
	assert.NotEqual(t, strings.Repeat("0", 64), claims["nonce"])
	assert.Equal(t, store.Approved, a.State, "issuing consumes nothing")
}

// TestTokenExpiryNeverOutlivesTheTicket: near the end of the approval
// window the token expires with the ticket, not a TTL later.
func TestTokenExpiryNeverOutlivesTheTicket(t *testing.T) {
	w := newTokenWorld(t)
	tk := approved(t, w.Harness, sendEmail("finance@example.com"))
	w.Clock.Set(tk.ExpiresAt.Add(-20 * time.Second))
	tok, err := w.issuer.Issue(context.Background(), tk.ID)
	require.NoError(t, err)
	claims := jwt.MapClaims{}
	_, _, err = jwt.NewParser().ParseUnverified(tok, claims)
	require.NoError(t, err)
	assert.Equal(t, float64(tk.ExpiresAt.Unix()), claims["exp"])

	w.Clock.Set(tk.ExpiresAt)
	_, err = w.mailer.Verify(context.Background(), tok, effectOf(sendEmail("finance@example.com")))
	assert.ErrorIs(t, err, stepup.ErrExpired)
}

// TestTokenIssueRefusals: only approved, unexpired, unused tickets whose
// effect is unchanged get a token.
func TestTokenIssueRefusals(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	pending, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	denied, err := w.Gate.Propose(ctx, sendEmail("ops@example.com"))
	require.NoError(t, err)
	_, err = w.Deny(denied.ID, "")
	require.NoError(t, err)
	ran := approved(t, w.Harness, sendEmail("cfo@example.com"))
	_, err = w.Gate.Execute(ctx, ran.ID)
	require.NoError(t, err)
	edited := approved(t, w.Harness, sendEmail("board@example.com"))

	tests := []struct {
		name  string
		id    stepup.TicketID
		setup func()
		want  error
	}{
		{"pending", pending.ID, nil, stepup.ErrNotApproved},
		{"denied", denied.ID, nil, stepup.ErrNotApproved},
		{"already executed", ran.ID, nil, stepup.ErrConsumed},
		{"unknown", "no-such-ticket", nil, stepup.ErrNotFound},
		{"attachment edited", edited.ID, func() {
			require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "q3.csv"), []byte("region,revenue\nwest,1\n"), 0o600))
		}, stepup.ErrEffectChanged},
		{"expired", edited.ID, func() { w.Clock.Advance(time.Hour) }, stepup.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			tok, err := w.issuer.Issue(ctx, tt.id)
			assert.ErrorIs(t, err, tt.want)
			assert.Empty(t, tok)
		})
	}
}

// TestTokenForAnAllowedCall: a call the policy allowed runs on a separate
// executor too; the token names the policy as the approver.
func TestTokenForAnAllowedCall(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	c := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Task: "t-42", Step: "s-0", Session: "sess-1", Principal: agentFor("user:dana")}
	tk, err := w.Gate.Propose(ctx, c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)
	tok, err := w.issuer.Issue(ctx, tk.ID)
	require.NoError(t, err)
	reader := w.verifier(t, w.issuer.PublicKey(), tokenIssuerName, "read_file")
	claims, err := reader.Verify(ctx, tok, effectOf(c))
	require.NoError(t, err)
	assert.Equal(t, "policy:"+stepuptest.SeedPolicyVersion, claims.Approver)
}

// TestTokenReadByAnyJWTLibrary: the token is a plain EdDSA JWT. jwt.Parse
// with the public key reads it, and so does the standard library alone
// (base64url, JSON, ed25519.Verify), as a verifier in any language would.
func TestTokenReadByAnyJWTLibrary(t *testing.T) {
	w := newTokenWorld(t)
	tk, tok := w.issued(t, sendEmail("finance@example.com"))

	parsed, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return w.issuer.PublicKey(), nil },
		jwt.WithTimeFunc(w.Clock.Now))
	require.NoError(t, err)
	assert.True(t, parsed.Valid)
	jti, ok := parsed.Claims.(jwt.MapClaims)["jti"].(string)
	require.True(t, ok)
	assert.Equal(t, string(tk.ID), jti)

	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	assert.True(t, ed25519.Verify(w.issuer.PublicKey(), []byte(parts[0]+"."+parts[1]), sig))
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var claims struct {
		Digest string `json:"digest"`
	}
	require.NoError(t, json.Unmarshal(payload, &claims))
	assert.Equal(t, tk.Digest.String(), claims.Digest)
}

// TestTokenIssuerConfig refuses unusable configurations up front.
func TestTokenIssuerConfig(t *testing.T) {
	w := newWorld(t)
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	tests := []struct {
		name string
		new  func() (*exectoken.TokenIssuer, error)
	}{
		{"no gate", func() (*exectoken.TokenIssuer, error) { return exectoken.NewTokenIssuer(nil, key, "g") }},
		{"no key", func() (*exectoken.TokenIssuer, error) { return exectoken.NewTokenIssuer(w.Gate, nil, "g") }},
		{"no issuer", func() (*exectoken.TokenIssuer, error) { return exectoken.NewTokenIssuer(w.Gate, key, "") }},
		{"zero TTL", func() (*exectoken.TokenIssuer, error) {
			return exectoken.NewTokenIssuer(w.Gate, key, "g", exectoken.WithTokenTTL(0))
		}},
		{"short key", func() (*exectoken.TokenIssuer, error) {
			return exectoken.NewTokenIssuer(w.Gate, ed25519.PrivateKey(key[:32]), "g")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ti, err := tt.new()
			assert.ErrorIs(t, err, stepup.ErrConfig)
			assert.Nil(t, ti)
		})
	}
}

// tokenExample is a gate on a store the mailer service shares, with an
// approved send_email ticket.
func tokenExample() (*gate.Gate, *memory.Store, *stepuptest.Clock, stepup.TicketID, canon.Effect) {
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0))
	if err != nil {
		panic(err)
	}
	approver, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	if err != nil {
		panic(err)
	}
	call := stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Task: "t-42", Session: "s-1", Principal: agentFor("user:dana")}
	tk, _ := g.Propose(ctx, call)
	if _, err := stepuptest.Approve(ctx, g.Desk(), approver, tk.ID); err != nil {
		panic(err)
	}
	// The effect as the runtime forwards it to the mailer.
	e := canon.Effect{Tool: call.Tool, Args: call.Args, Task: call.Task, Principal: call.Principal,
		PolicyVersion: stepuptest.SeedPolicyVersion, Audience: "send_email"}
	return g, st, clock, tk.ID, e
}

func ExampleTokenIssuer_Issue() {
	g, _, _, id, _ := tokenExample()
	_, key, _ := ed25519.GenerateKey(rand.Reader) // the gate's signing key
	issuer, err := exectoken.NewTokenIssuer(g, key, "gate.example.com")
	if err != nil {
		panic(err)
	}
	token, err := issuer.Issue(context.Background(), id)
	fmt.Println(strings.Count(token, "."), err)

	// Any JWT library reads it with the gate's public key.
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return issuer.PublicKey(), nil },
		jwt.WithTimeFunc(func() time.Time { return stepuptest.Start() }))
	fmt.Println(claims["iss"], claims["aud"], claims["sub"], claims["jti"] == string(id), err)
	// Output:
	// 2 <nil>
	// gate.example.com [send_email] user:dana true <nil>
}
