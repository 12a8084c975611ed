package passkey_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// signInWorld is a gate harness (user:dana enrolled, credentials sealed)
// with a SignIn over the same credentials and clock.
type signInWorld struct {
	*stepuptest.Harness
	signIn *passkey.SignIn
}

func newSignInWorld(t testing.TB, opts ...passkey.SignInOption) signInWorld {
	t.Helper()
	h := stepuptest.NewGate(t, nil)
	s, err := passkey.NewSignIn(stepuptest.Passkeys(h.Store), append([]passkey.SignInOption{passkey.SignInClock(h.Clock.Now)}, opts...)...)
	require.NoError(t, err)
	return signInWorld{Harness: h, signIn: s}
}

// signIn runs one sign-in with a.
func (w signInWorld) signInWith(t *testing.T, a *stepuptest.Authenticator, tweaks ...stepuptest.Tweak) (passkey.SignedIn, error) {
	t.Helper()
	opts, state, err := w.signIn.Begin(context.Background())
	require.NoError(t, err)
	answer, err := a.Assert(opts, tweaks...)
	require.NoError(t, err)
	return w.signIn.Finish(context.Background(), state, answer)
}

func TestSignIn(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	opts, state, err := w.signIn.Begin(ctx)
	require.NoError(t, err)
	var o struct {
		Challenge        string            `json:"challenge"`
		RPID             string            `json:"rpId"`
		UserVerification string            `json:"userVerification"`
		Allow            []json.RawMessage `json:"allowCredentials"`
		Timeout          int               `json:"timeout"`
	}
	require.NoError(t, json.Unmarshal(opts, &o))
	challenge, err := base64.RawURLEncoding.DecodeString(o.Challenge)
	require.NoError(t, err)
	assert.Len(t, challenge, 32)
	assert.Equal(t, stepuptest.RP().ID, o.RPID)
	assert.Equal(t, "required", o.UserVerification)
	assert.Empty(t, o.Allow, "the browser offers the site's discoverable passkeys")
	assert.Equal(t, int(passkey.DefaultSignInTTL/time.Millisecond), o.Timeout)

	answer, err := w.Authenticator.Assert(opts)
	require.NoError(t, err)
	who, err := w.signIn.Finish(ctx, state, answer)
	require.NoError(t, err)
	assert.Equal(t, stepuptest.Approver, who.User)
	assert.Equal(t, w.Authenticator.CredentialIDs()[0], who.CredentialID)
	assert.NoError(t, w.signIn.Recheck(ctx, who))

	// A state signs in once, even with a fresh assertion over it.
	again, err := w.Authenticator.Assert(opts)
	require.NoError(t, err)
	_, err = w.signIn.Finish(ctx, state, again)
	assert.ErrorIs(t, err, passkey.ErrSignIn)

	// Two sign-ins never share a challenge.
	opts2, _, err := w.signIn.Begin(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, string(opts), string(opts2))
}

func TestSignInExpires(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t, passkey.SignInTTL(time.Minute))
	opts, state, err := w.signIn.Begin(ctx)
	require.NoError(t, err)
	answer, err := w.Authenticator.Assert(opts)
	require.NoError(t, err)
	w.Clock.Advance(time.Minute)
	_, err = w.signIn.Finish(ctx, state, answer)
	assert.ErrorIs(t, err, passkey.ErrSignIn)
}

func TestSignInRefusesStatesNotMadeHere(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	other, err := passkey.NewSignIn(stepuptest.Passkeys(w.Store), passkey.SignInClock(w.Clock.Now))
	require.NoError(t, err)
	opts, state, err := other.Begin(ctx)
	require.NoError(t, err)
	answer, err := w.Authenticator.Assert(opts)
	require.NoError(t, err)
	_, err = w.signIn.Finish(ctx, state, answer)
	assert.ErrorIs(t, err, passkey.ErrSignIn, "another key's state")

	for name, state := range map[string]string{
		"empty":     "",
		"not b64":   "!!!!",
		"short":     base64.RawURLEncoding.EncodeToString(make([]byte, 71)),
		"long":      base64.RawURLEncoding.EncodeToString(make([]byte, 73)),
		"zeros":     base64.RawURLEncoding.EncodeToString(make([]byte, 72)),
		"huge":      string(make([]byte, 1<<20)),
		"padded":    state + "==",
		"truncated": state[:len(state)-1],
	} {
		_, err := w.signIn.Finish(ctx, state, answer)
		assert.ErrorIs(t, err, passkey.ErrSignIn, name)
	}
}

// TestSignInTamperProperty: for generated states, changing any one byte
// makes Finish refuse the state before it looks at the answer.
func TestSignInTamperProperty(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 0x51))
		_, state, err := w.signIn.Begin(ctx)
		require.NoError(t, err)
		raw, err := base64.RawURLEncoding.DecodeString(state)
		require.NoError(t, err)
		i := r.IntN(len(raw))
		raw[i] ^= byte(1 + r.IntN(255))
		_, err = w.signIn.Finish(ctx, base64.RawURLEncoding.EncodeToString(raw), []byte(`{}`))
		assert.ErrorIs(t, err, passkey.ErrSignIn, "seed %d: byte %d", seed, i)
	}
}

// TestSignInIsNotAnApproval: the sign-in challenge and the tickets'
// challenges are apart. A sign-in assertion does not approve or deny a
// ticket, and neither a ticket's approve nor its deny assertion signs in.
func TestSignInIsNotAnApproval(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	desk := w.Gate.Desk()
	tk, err := w.Gate.Propose(ctx, stepuptest.SendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)

	opts, state, err := w.signIn.Begin(ctx)
	require.NoError(t, err)
	signInAnswer, err := w.Authenticator.Assert(opts)
	require.NoError(t, err)
	_, err = desk.Approve(ctx, tk.ID, signInAnswer)
	var ae *passkey.AssertionError
	require.ErrorAs(t, err, &ae, "a sign-in assertion does not approve")
	assert.Equal(t, "challenge", ae.Check)
	_, err = desk.Deny(ctx, tk.ID, signInAnswer, "")
	assert.ErrorIs(t, err, stepup.ErrBadAssertion, "nor deny")
	got, err := w.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status)

	p, err := desk.Prompt(ctx, tk.ID)
	require.NoError(t, err)
	for name, ticketOpts := range map[string]json.RawMessage{"approve": p.Options, "deny": p.DenyOptions} {
		answer, err := w.Authenticator.Assert(ticketOpts)
		require.NoError(t, err)
		_, err = w.signIn.Finish(ctx, state, answer)
		require.ErrorAs(t, err, &ae, "a ticket's %s assertion does not sign in", name)
		assert.Equal(t, "challenge", ae.Check, name)
	}
	// The sign-in's own assertion still signs in: the refusals spent
	// neither the state nor the counter.
	who, err := w.signIn.Finish(ctx, state, signInAnswer)
	require.NoError(t, err)
	assert.Equal(t, stepuptest.Approver, who.User)
}

func TestSignInRefusals(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		tweaks []stepuptest.Tweak
		check  string
	}{
		{"other origin", []stepuptest.Tweak{stepuptest.WithOrigin("https://evil.example")}, "origin"},
		{"other rp id", []stepuptest.Tweak{stepuptest.WithRPID("evil.example")}, "rp id"},
		{"registration type", []stepuptest.Tweak{stepuptest.WithType("webauthn.create")}, "ceremony type"},
		{"no user verification", []stepuptest.Tweak{stepuptest.WithoutUserVerification()}, "user verification"},
		{"no user presence", []stepuptest.Tweak{stepuptest.WithoutUserPresence()}, "user presence"},
		{"other challenge", []stepuptest.Tweak{stepuptest.WithChallenge(make([]byte, 32))}, "challenge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSignInWorld(t)
			_, err := w.signInWith(t, w.Authenticator, tt.tweaks...)
			var ae *passkey.AssertionError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.check, ae.Check)
			assert.ErrorIs(t, err, stepup.ErrBadAssertion)
		})
	}
	t.Run("malformed answer", func(t *testing.T) {
		w := newSignInWorld(t)
		_, state, err := w.signIn.Begin(ctx)
		require.NoError(t, err)
		for _, answer := range []string{"", "{}", "null", `{"id":1}`, "[]"} {
			_, err = w.signIn.Finish(ctx, state, []byte(answer))
			assert.ErrorIs(t, err, stepup.ErrBadAssertion, answer)
		}
	})
	t.Run("unknown credential", func(t *testing.T) {
		w := newSignInWorld(t)
		// A credential enrolled in another deployment's store.
		stranger := newSignInWorld(t).Enroll(t, "user:erin")
		_, err := w.signInWith(t, stranger)
		assert.ErrorIs(t, err, passkey.ErrUnknownCredential)
	})
	t.Run("unsealed credential", func(t *testing.T) {
		w := newSignInWorld(t)
		loose, err := passkey.NewEnrollment(w.Store, stepuptest.RP(), passkey.WithClock(w.Clock.Now))
		require.NoError(t, err)
		erin, err := stepuptest.Enroll(ctx, loose, "user:erin")
		require.NoError(t, err)
		_, err = w.signInWith(t, erin)
		assert.ErrorIs(t, err, passkey.ErrUnknownCredential)
	})
	t.Run("agent credential row", func(t *testing.T) {
		// A row naming an agent, written straight into the table with
		// dana's public key: refused before its signature is looked at.
		w := newSignInWorld(t)
		cred, err := w.Store.GetCredential(ctx, w.Authenticator.CredentialIDs()[0])
		require.NoError(t, err)
		agent := cred
		agent.ID, agent.User = []byte("agent-credential"), "agent:reports"
		require.NoError(t, w.Store.PutCredential(ctx, agent))
		opts, state, err := w.signIn.Begin(ctx)
		require.NoError(t, err)
		answer, err := w.Authenticator.Assert(opts)
		require.NoError(t, err)
		var raw map[string]any
		require.NoError(t, json.Unmarshal(answer, &raw))
		id := base64.RawURLEncoding.EncodeToString(agent.ID)
		raw["id"], raw["rawId"] = id, id
		answer, err = json.Marshal(raw)
		require.NoError(t, err)
		_, err = w.signIn.Finish(ctx, state, answer)
		assert.ErrorIs(t, err, stepup.ErrNotPermitted)
	})
}

// TestSignInRevokedCredential: a revoked credential neither signs in nor
// keeps standing in Recheck, so a session bound to it ends.
func TestSignInRevokedCredential(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	who, err := w.signInWith(t, w.Authenticator)
	require.NoError(t, err)
	require.NoError(t, w.signIn.Recheck(ctx, who))
	require.NoError(t, w.Enrollment.RevokeCredential(ctx, who.CredentialID, "user:admin", "lost phone"))
	assert.ErrorIs(t, w.signIn.Recheck(ctx, who), stepup.ErrRevoked)
	_, err = w.signInWith(t, w.Authenticator)
	assert.ErrorIs(t, err, stepup.ErrRevoked)

	for name, other := range map[string]passkey.SignedIn{
		"unknown id": {User: who.User, CredentialID: []byte("nope")},
		"other user": {User: "user:erin", CredentialID: who.CredentialID},
	} {
		err := w.signIn.Recheck(ctx, other)
		assert.Error(t, err, name)
	}
	erin := w.Enroll(t, "user:erin")
	err = w.signIn.Recheck(ctx, passkey.SignedIn{User: stepuptest.Approver, CredentialID: erin.CredentialIDs()[0]})
	assert.ErrorIs(t, err, passkey.ErrUnknownCredential, "a credential proves only its own user")
}

// TestSignInOnceUnderRace: two finishes of one state with one assertion,
// at once: exactly one signs in.
func TestSignInOnceUnderRace(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	opts, state, err := w.signIn.Begin(ctx)
	require.NoError(t, err)
	answer, err := w.Authenticator.Assert(opts, stepuptest.WithSignCount(0)) // a counter-less passkey
	require.NoError(t, err)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = w.signIn.Finish(ctx, state, answer) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			assert.ErrorIs(t, err, passkey.ErrSignIn)
		}
	}
	assert.Equal(t, 1, ok)
}

func TestSignInInFlightBound(t *testing.T) {
	w := newSignInWorld(t, passkey.SignInsInFlight(1), passkey.SignInTTL(time.Minute))
	_, err := w.signInWith(t, w.Authenticator)
	require.NoError(t, err)
	_, err = w.signInWith(t, w.Authenticator)
	assert.ErrorIs(t, err, passkey.ErrSignIn, "the one slot holds a state that has not expired")
	w.Clock.Advance(time.Minute)
	_, err = w.signInWith(t, w.Authenticator)
	assert.NoError(t, err, "an expired state frees its slot")
}

func TestNewSignInConfig(t *testing.T) {
	w := newSignInWorld(t)
	approver := stepuptest.Passkeys(w.Store)
	_, err := passkey.NewSignIn(nil)
	assert.ErrorIs(t, err, stepup.ErrConfig)
	for name, opt := range map[string]passkey.SignInOption{
		"short key":   passkey.SignInKey([]byte("short")),
		"zero ttl":    passkey.SignInTTL(0),
		"long ttl":    passkey.SignInTTL(passkey.MaxSignInTTL + time.Second),
		"nil clock":   passkey.SignInClock(nil),
		"zero bound":  passkey.SignInsInFlight(0),
		"minus bound": passkey.SignInsInFlight(-1),
	} {
		_, err := passkey.NewSignIn(approver, opt)
		assert.ErrorIs(t, err, stepup.ErrConfig, name)
	}

	// Replicas sharing a key finish each other's sign-ins.
	key := make([]byte, passkey.MinSealKeySize)
	a, err := passkey.NewSignIn(approver, passkey.SignInKey(key), passkey.SignInClock(w.Clock.Now))
	require.NoError(t, err)
	b, err := passkey.NewSignIn(approver, passkey.SignInKey(key), passkey.SignInClock(w.Clock.Now))
	require.NoError(t, err)
	opts, state, err := a.Begin(context.Background())
	require.NoError(t, err)
	answer, err := w.Authenticator.Assert(opts)
	require.NoError(t, err)
	who, err := b.Finish(context.Background(), state, answer)
	require.NoError(t, err)
	assert.Equal(t, stepuptest.Approver, who.User)
}

// FuzzSignInFinish feeds arbitrary states and answers: Finish never
// panics, and nothing signs in without a state this SignIn made and an
// assertion of an enrolled passkey over its challenge.
func FuzzSignInFinish(f *testing.F) {
	w := newSignInWorld(f)
	_, state, err := w.signIn.Begin(context.Background())
	require.NoError(f, err)
	f.Add("", []byte(`{}`))
	f.Add(state, []byte(`{}`))
	f.Add(base64.RawURLEncoding.EncodeToString(make([]byte, 72)), []byte(`{"id":"AA","rawId":"AA","type":"public-key","response":{}}`))
	f.Add("AAAA", []byte(`null`))
	f.Fuzz(func(t *testing.T, state string, answer []byte) {
		who, err := w.signIn.Finish(context.Background(), state, answer)
		if err == nil {
			t.Fatalf("signed in %q with a fuzzed answer", who.User)
		}
	})
}

// ExampleNewSignIn signs an approver in with their passkey, to show them
// their queue. The session it opens only lists: approving a ticket still
// signs that ticket's challenge, and a sign-in assertion approves nothing.
func ExampleNewSignIn() {
	ctx := context.Background()
	st := memory.New(nil)
	key := []byte("32+ random bytes kept outside the database")
	enroll, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKey(key))
	if err != nil {
		panic(err)
	}
	approver, err := passkey.New(st, stepuptest.RP(), passkey.RequireSeal(key))
	if err != nil {
		panic(err)
	}
	dana, err := stepuptest.Enroll(ctx, enroll, "user:dana")
	if err != nil {
		panic(err)
	}
	signIn, err := passkey.NewSignIn(approver, passkey.SignInKey(key))
	if err != nil {
		panic(err)
	}

	options, state, err := signIn.Begin(ctx) // options to navigator.credentials.get; state kept by the page
	if err != nil {
		panic(err)
	}
	answer, err := dana.Assert(options) // the browser's answer
	if err != nil {
		panic(err)
	}
	who, err := signIn.Finish(ctx, state, answer)
	fmt.Println(who.User, err)
	_, err = signIn.Finish(ctx, state, answer)
	fmt.Println(errors.Is(err, passkey.ErrSignIn))

	// Every request of the session rechecks the credential: revoking it
	// ends the session.
	fmt.Println(signIn.Recheck(ctx, who))
	if err := enroll.RevokeCredential(ctx, who.CredentialID, "user:admin", "lost phone"); err != nil {
		panic(err)
	}
	fmt.Println(errors.Is(signIn.Recheck(ctx, who), stepup.ErrRevoked))
	// Output:
	// user:dana <nil>
	// true
	// <nil>
	// true
}
