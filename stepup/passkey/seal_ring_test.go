package passkey_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// sealWorld is a store on a test clock with an enrollment and an approver
// reading one live seal ring.
type sealWorld struct {
	st     *memory.Store
	clock  *stepuptest.Clock
	live   *keyring.Live
	enroll *passkey.Enrollment
	signin *passkey.SignIn
}

func newSealWorld(t *testing.T) *sealWorld {
	t.Helper()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	r, err := keyring.Single(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	live := keyring.NewLive(r)
	enroll, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKeyRing(live))
	require.NoError(t, err)
	w, err := passkey.New(st, stepuptest.RP(), passkey.RequireSealKeyRing(live, st))
	require.NoError(t, err)
	signin, err := passkey.NewSignIn(w)
	require.NoError(t, err)
	return &sealWorld{st: st, clock: clock, live: live, enroll: enroll, signin: signin}
}

func (w *sealWorld) enrolled(t *testing.T, user string) passkey.SignedIn {
	t.Helper()
	a, err := stepuptest.Enroll(context.Background(), w.enroll, user)
	require.NoError(t, err)
	return passkey.SignedIn{User: user, CredentialID: a.CredentialIDs()[0]}
}

// TestSealRingKeepsOldPasskeysDuringGrace: a passkey enrolled (sealed)
// under the old key still passes after a rotation while the old key's
// grace runs, a passkey enrolled after the rotation is sealed by the new
// key, and once the grace ended the old seal passes nothing: refused as
// an unknown credential, the error naming the retired key.
func TestSealRingKeepsOldPasskeysDuringGrace(t *testing.T) {
	ctx := context.Background()
	w := newSealWorld(t)
	old := w.enrolled(t, "user:dana")
	oldID := w.live.Ring().Current().ID

	rotated, newID, err := w.live.Ring().Rotate(bytes.Repeat([]byte{2}, 32), w.clock.Now(), time.Hour)
	require.NoError(t, err)
	w.live.Set(rotated)
	fresh := w.enrolled(t, "user:erin")
	row, err := w.st.GetCredential(ctx, fresh.CredentialID)
	require.NoError(t, err)
	assert.Equal(t, newID, string(row.Seal[32:]))

	require.NoError(t, w.signin.Recheck(ctx, old))
	w.clock.Advance(time.Hour - time.Second)
	require.NoError(t, w.signin.Recheck(ctx, old))
	w.clock.Advance(time.Second)
	err = w.signin.Recheck(ctx, old)
	require.ErrorIs(t, err, passkey.ErrUnknownCredential)
	require.ErrorIs(t, err, keyring.ErrRetired)
	assert.Contains(t, err.Error(), oldID)
	require.NoError(t, w.signin.Recheck(ctx, fresh))
}

// TestSealRingAcceptsSealsFromBeforeKeyIDs: a seal of 32 bytes, as
// enrollments wrote before key ids, passes under the key still in force
// that made it, and not under any other.
func TestSealRingAcceptsSealsFromBeforeKeyIDs(t *testing.T) {
	ctx := context.Background()
	w := newSealWorld(t)
	// An enrollment of before key ids, with the ring's key: its seal is
	// the bare MAC.
	legacyOf := func(c store.Credential) store.Credential {
		st := memory.New(nil)
		e, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKey(bytes.Repeat([]byte{1}, 32)))
		require.NoError(t, err)
		a, err := stepuptest.Enroll(ctx, e, c.User)
		require.NoError(t, err)
		r, err := st.GetCredential(ctx, a.CredentialIDs()[0])
		require.NoError(t, err)
		r.Seal = r.Seal[:32]
		return r
	}
	l := legacyOf(store.Credential{User: "user:dana"})
	require.NoError(t, w.st.PutCredential(ctx, l))
	who2 := passkey.SignedIn{User: l.User, CredentialID: l.ID}
	require.NoError(t, w.signin.Recheck(ctx, who2))

	rotated, _, err := w.live.Ring().Rotate(bytes.Repeat([]byte{2}, 32), w.clock.Now(), time.Minute)
	require.NoError(t, err)
	w.live.Set(rotated)
	require.NoError(t, w.signin.Recheck(ctx, who2), "in grace")
	w.clock.Advance(time.Minute)
	require.ErrorIs(t, w.signin.Recheck(ctx, who2), passkey.ErrUnknownCredential, "after grace")
}

// TestRequireSealKeyRingNeedsAClock: a ring that can retire keys is
// judged by the store's clock, so one is required.
func TestRequireSealKeyRingNeedsAClock(t *testing.T) {
	r, err := keyring.Single(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	_, err = passkey.New(memory.New(nil), stepuptest.RP(), passkey.RequireSealKeyRing(r, nil))
	require.Error(t, err)
	_, err = passkey.NewEnrollment(memory.New(nil), stepuptest.RP(), passkey.WithSealKeyRing(nil))
	require.Error(t, err)
}

// failingClock is a store clock that cannot be read.
type failingClock struct{}

func (failingClock) Now(context.Context) (time.Time, error) {
	return time.Time{}, errors.New("connection reset")
}

// TestSealRingClockFailureIsAStoreError: when a retired key's grace must
// be judged and the store's clock cannot be read, the check fails as a
// store error (retry later), not as a forged credential.
func TestSealRingClockFailureIsAStoreError(t *testing.T) {
	ctx := context.Background()
	w := newSealWorld(t)
	who := w.enrolled(t, "user:dana")
	rotated, _, err := w.live.Ring().Rotate(bytes.Repeat([]byte{2}, 32), w.clock.Now(), time.Hour)
	require.NoError(t, err)
	w.live.Set(rotated)
	approver, err := passkey.New(w.st, stepuptest.RP(), passkey.RequireSealKeyRing(w.live, failingClock{}))
	require.NoError(t, err)
	signin, err := passkey.NewSignIn(approver)
	require.NoError(t, err)
	err = signin.Recheck(ctx, who)
	require.ErrorIs(t, err, stepup.ErrStore)
	assert.NotErrorIs(t, err, passkey.ErrUnknownCredential)
}
