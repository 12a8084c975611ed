package exectoken_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/store"
)

// ringWorld is a token world whose gate signs with a live ring and whose
// executor verifies with the ring's public half, rotated together.
type ringWorld struct {
	*world
	keys   *keyring.Live
	issuer *exectoken.TokenIssuer
	mailer *exectoken.Verifier
	public *publicLive
}

// publicLive is the executor's copy of the ring's public half.
type publicLive struct{ r *keyring.PublicRing }

func (p *publicLive) PublicRing() *keyring.PublicRing { return p.r }

func newRingWorld(t *testing.T) *ringWorld {
	t.Helper()
	w := newWorld(t)
	r, err := keyring.Single(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	live := keyring.NewLive(r)
	ti, err := exectoken.NewTokenIssuerRing(w.Gate, live, tokenIssuerName)
	require.NoError(t, err)
	pub := &publicLive{r: r.Public()}
	v, err := exectoken.NewVerifierRing(pub, tokenIssuerName, "send_email", w.Store, w.Gate,
		exectoken.WithVerifierResolver(canon.FileResolver{Root: w.Dir}), exectoken.WithVerifierLocalClock(w.Clock.Now))
	require.NoError(t, err)
	return &ringWorld{world: w, keys: live, issuer: ti, mailer: v, public: pub}
}

// rotate rotates the ring with grace, on the gate and the executor.
func (w *ringWorld) rotate(t *testing.T, b byte, grace time.Duration) string {
	t.Helper()
	r, id, err := w.keys.Ring().Rotate(bytes.Repeat([]byte{b}, 32), w.Clock.Now(), grace)
	require.NoError(t, err)
	w.public.r = r.Public()
	w.keys.Set(r)
	return id
}

func kidOf(t *testing.T, tok string) any {
	t.Helper()
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	require.NoError(t, err)
	return parsed.Header["kid"]
}

// TestTokensSignedBeforeRotationVerifyDuringGrace: a token issued under
// the old key names it and still spends its ticket after the rotation,
// within the grace; tokens issued after name the new key.
func TestTokensSignedBeforeRotationVerifyDuringGrace(t *testing.T) {
	w := newRingWorld(t)
	c := sendEmail("finance@example.com")
	oldID := w.keys.Ring().Current().ID
	_, tok := issuedBy(t, w.world, w.issuer, c)
	assert.Equal(t, oldID, kidOf(t, tok))

	newID := w.rotate(t, 2, time.Hour)
	w.Clock.Advance(30 * time.Second)
	claims, err := w.mailer.Verify(context.Background(), tok, effectOf(c))
	require.NoError(t, err, "0 tokens refused for the rotation")
	assert.NotEmpty(t, claims.IdempotencyKey)

	_, tok2 := issuedBy(t, w.world, w.issuer, sendEmail("board@example.com"))
	assert.Equal(t, newID, kidOf(t, tok2))
	_, err = w.mailer.Verify(context.Background(), tok2, effectOf(sendEmail("board@example.com")))
	require.NoError(t, err)
}

// TestTokensOfARetiredKeyVerifyNothingAfterGrace: across grace lengths and
// the instants around their end, a token of the old key spends its ticket
// exactly while the grace runs, and is refused as a bad signature naming
// the retired key from its end on (the token itself still unexpired).
func TestTokensOfARetiredKeyVerifyNothingAfterGrace(t *testing.T) {
	for _, grace := range []time.Duration{0, time.Second, 10 * time.Second, 45 * time.Second} {
		for _, after := range []time.Duration{-time.Second, 0, time.Second} {
			at := grace + after
			if at < 0 {
				continue
			}
			t.Run(grace.String()+"+"+after.String(), func(t *testing.T) {
				w := newRingWorld(t)
				c := sendEmail("finance@example.com")
				tk, tok := issuedBy(t, w.world, w.issuer, c)
				w.rotate(t, 2, grace)
				w.Clock.Advance(at)
				_, err := w.mailer.Verify(context.Background(), tok, effectOf(c))
				if at < grace {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, exectoken.ErrTokenSignature)
				require.ErrorIs(t, err, keyring.ErrRetired)
				assert.Contains(t, err.Error(), "retired")
				a, err := w.Store.Get(context.Background(), string(tk.ID))
				require.NoError(t, err)
				assert.Equal(t, store.Approved, a.State, "nothing spent")
			})
		}
	}
}

// TestRingVerifierTakesTokensFromBeforeKeyIDs: a token without a kid (a
// single-key issuer's) verifies under a ring key in force that signed it,
// and a token naming a key the executor does not hold is refused.
func TestRingVerifierTakesTokensFromBeforeKeyIDs(t *testing.T) {
	w := newRingWorld(t)
	legacy, err := exectoken.NewTokenIssuer(w.Gate, w.keys.Ring().Current().Ed25519(), tokenIssuerName)
	require.NoError(t, err)
	c := sendEmail("finance@example.com")
	_, tok := issuedBy(t, w.world, legacy, c)
	assert.Nil(t, kidOf(t, tok))
	w.rotate(t, 2, time.Hour)
	_, err = w.mailer.Verify(context.Background(), tok, effectOf(c))
	require.NoError(t, err)

	// The executor has not yet received the new key.
	stale := w.public.r
	w.rotate(t, 3, time.Hour)
	w.public.r = stale
	c2 := sendEmail("board@example.com")
	_, tok2 := issuedBy(t, w.world, w.issuer, c2)
	_, err = w.mailer.Verify(context.Background(), tok2, effectOf(c2))
	require.ErrorIs(t, err, exectoken.ErrTokenSignature)
	require.ErrorIs(t, err, keyring.ErrUnknownKey)
}

// issuedBy proposes c, approves it and issues its token with ti.
func issuedBy(t *testing.T, w *world, ti *exectoken.TokenIssuer, c stepup.Call) (stepup.Ticket, string) {
	t.Helper()
	tk := approved(t, w.Harness, c)
	tok, err := ti.Issue(context.Background(), tk.ID)
	require.NoError(t, err)
	return tk, tok
}
