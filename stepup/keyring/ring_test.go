package keyring_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/keyring"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func mac(secret []byte, msg string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func TestNewRefusesInvalidRings(t *testing.T) {
	cur := keyring.Key{ID: "a", Secret: secret(1), State: keyring.Current}
	for _, tc := range []struct {
		name string
		keys []keyring.Key
		want string
	}{
		{"none", nil, "1 to 64 keys"},
		{"no current", []keyring.Key{{ID: "a", Secret: secret(1), State: keyring.Verify}}, "no key is current"},
		{"two current", []keyring.Key{cur, {ID: "b", Secret: secret(2), State: keyring.Current}}, "both current"},
		{"duplicate id", []keyring.Key{cur, {ID: "a", Secret: secret(2), State: keyring.Verify}}, "appears twice"},
		{"duplicate secret", []keyring.Key{cur, {ID: "b", Secret: secret(1), State: keyring.Verify}}, "same secret"},
		{"short secret", []keyring.Key{{ID: "a", Secret: make([]byte, 31), State: keyring.Current}}, "31 bytes"},
		{"long secret", []keyring.Key{{ID: "a", Secret: make([]byte, keyring.MaxSecretSize+1), State: keyring.Current}}, "513 bytes"},
		{"empty id", []keyring.Key{{Secret: secret(1), State: keyring.Current}}, "1 to 64"},
		{"bad id", []keyring.Key{{ID: "a b", Secret: secret(1), State: keyring.Current}}, "letters, digits"},
		{"no state", []keyring.Key{cur, {ID: "b", Secret: secret(2)}}, "no state"},
		{"retired without grace", []keyring.Key{cur, {ID: "b", Secret: secret(2), State: keyring.Retired}}, "no grace end"},
		{"current with grace", []keyring.Key{{ID: "a", Secret: secret(1), State: keyring.Current, GraceUntil: t0}}, "only retired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keyring.New(tc.keys...)
			require.ErrorIs(t, err, keyring.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestDefaultIDIsStableAndRevealsNothing(t *testing.T) {
	a, b := keyring.DefaultID(secret(1)), keyring.DefaultID(secret(1))
	assert.Equal(t, a, b)
	assert.Len(t, a, 16)
	assert.NotEqual(t, a, keyring.DefaultID(secret(2)))
	assert.NotContains(t, a, "0101")
	r, err := keyring.Single(secret(1))
	require.NoError(t, err)
	assert.Equal(t, a, r.Current().ID)
}

func TestRingVerifyPicksTheKeyByID(t *testing.T) {
	r, err := keyring.New(
		keyring.Key{ID: "old", Secret: secret(1), State: keyring.Retired, GraceUntil: t0.Add(time.Hour)},
		keyring.Key{ID: "cur", Secret: secret(2), State: keyring.Current},
		keyring.Key{ID: "next", Secret: secret(3), State: keyring.Verify},
	)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		id     string
		signer []byte
		at     time.Time
		want   string
		err    error
	}{
		{"current", "cur", secret(2), t0, "cur", nil},
		{"verify-only", "next", secret(3), t0, "next", nil},
		{"retired in grace", "old", secret(1), t0.Add(time.Hour - time.Nanosecond), "old", nil},
		{"retired at grace end", "old", secret(1), t0.Add(time.Hour), "", keyring.ErrRetired},
		{"retired after grace", "old", secret(1), t0.Add(48 * time.Hour), "", keyring.ErrRetired},
		{"wrong key for id", "cur", secret(3), t0, "", keyring.ErrMismatch},
		{"unknown id", "gone", secret(2), t0, "", keyring.ErrUnknownKey},
		{"malformed id", "a\x00b", secret(2), t0, "", keyring.ErrUnknownKey},
		{"legacy under current", "", secret(2), t0, "cur", nil},
		{"legacy under verify-only", "", secret(3), t0, "next", nil},
		{"legacy under retired in grace", "", secret(1), t0, "old", nil},
		{"legacy under retired after grace", "", secret(1), t0.Add(time.Hour), "", keyring.ErrMismatch},
		{"legacy under no key", "", secret(9), t0, "", keyring.ErrMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := mac(tc.signer, "evidence")
			got, err := r.Verify(tc.id, tc.at, func(s []byte) bool { return hmac.Equal(mac(s, "evidence"), want) })
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.NotContains(t, err.Error(), string(tc.signer))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRetiredErrorNamesTheKey(t *testing.T) {
	r, err := keyring.New(keyring.Key{ID: "cur", Secret: secret(2), State: keyring.Current},
		keyring.Key{ID: "old", Secret: secret(1), State: keyring.Retired, GraceUntil: t0})
	require.NoError(t, err)
	_, err = r.Find("old", t0)
	var re *keyring.RetiredError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "old", re.ID)
	assert.Contains(t, err.Error(), `"old" is retired`)
}

func TestKeyNeverPrintsItsSecret(t *testing.T) {
	k := keyring.Key{ID: "cur", Secret: []byte("0123456789abcdef0123456789abcdef"), State: keyring.Current}
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k)} {
		assert.NotContains(t, s, "0123456789abcdef")
	}
}

// TestRotationGenerator drives random sequences of adds, promotions and
// prunes at random times and checks, at random instants, that exactly the
// keys the operator left in force verify: the current one, verify-only
// ones, and retired ones strictly before their grace ends, never after.
func TestRotationGenerator(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 300 {
		r, err := keyring.Single(secret(0))
		require.NoError(t, err)
		now := t0
		graces := map[string]time.Time{} // retired id -> grace end
		for step := range 12 {
			now = now.Add(time.Duration(rng.IntN(3600)) * time.Second)
			switch rng.IntN(4) {
			case 0, 1: // rotate, or add then promote
				s := bytes.Repeat([]byte{byte(run), byte(step), 1}, 11)
				grace := time.Duration(rng.IntN(7200)) * time.Second
				old := r.Current().ID
				var id string
				if rng.IntN(2) == 0 {
					r, id, err = r.Rotate(s, now, grace)
				} else {
					r, id, err = r.Add(s)
					require.NoError(t, err)
					r, err = r.Promote(id, now, grace)
				}
				require.NoError(t, err)
				graces[old] = now.Add(grace)
				assert.Equal(t, id, r.Current().ID)
			case 2:
				r = r.Prune(now)
			case 3:
				parsed, err := keyring.Parse("keys", keyring.Encode(r))
				require.NoError(t, err)
				require.Equal(t, r.Keys(), parsed.Keys())
				r = parsed
			}
			for range 5 {
				at := now.Add(time.Duration(rng.IntN(10800)-3600) * time.Second)
				for _, k := range r.Keys() {
					want := mac(k.Secret, "m")
					_, err := r.Verify(k.ID, at, func(s []byte) bool { return hmac.Equal(mac(s, "m"), want) })
					until, retired := graces[k.ID]
					if retired && !at.Before(until) {
						require.ErrorIs(t, err, keyring.ErrRetired, "key %s at %v after grace %v", k.ID, at, until)
					} else {
						require.NoError(t, err, "key %s at %v", k.ID, at)
					}
					_, lerr := r.Verify("", at, func(s []byte) bool { return hmac.Equal(mac(s, "m"), want) })
					assert.Equal(t, err == nil, lerr == nil)
				}
			}
		}
	}
}

func TestPromoteRefusesRetiredAndUnknown(t *testing.T) {
	r, err := keyring.Single(secret(1))
	require.NoError(t, err)
	old := r.Current().ID
	r, _, err = r.Rotate(secret(2), t0, time.Hour)
	require.NoError(t, err)
	_, err = r.Promote(old, t0, time.Hour)
	assert.ErrorIs(t, err, keyring.ErrInvalid)
	_, err = r.Promote("nope", t0, time.Hour)
	assert.ErrorIs(t, err, keyring.ErrUnknownKey)
	_, err = r.Promote(r.Current().ID, t0, -time.Second)
	assert.ErrorIs(t, err, keyring.ErrInvalid)
}

func TestPublicRingVerifiesSignaturesByID(t *testing.T) {
	r, err := keyring.Single(secret(1))
	require.NoError(t, err)
	oldKey := r.Current()
	r, _, err = r.Rotate(bytes.Repeat([]byte{7}, 48), t0, time.Hour)
	require.NoError(t, err)
	pub := r.Public()
	msg := []byte("checkpoint")
	sigOld := sign(oldKey, msg)
	sigNew := sign(r.Current(), msg)
	id, err := pub.Verify(r.Current().ID, t0, msg, sigNew)
	require.NoError(t, err)
	assert.Equal(t, r.Current().ID, id)
	_, err = pub.Verify(oldKey.ID, t0.Add(time.Minute), msg, sigOld)
	require.NoError(t, err)
	_, err = pub.Verify(oldKey.ID, t0.Add(time.Hour), msg, sigOld)
	require.ErrorIs(t, err, keyring.ErrRetired)
	_, err = pub.Verify("", t0.Add(time.Hour), msg, sigOld)
	require.ErrorIs(t, err, keyring.ErrMismatch)
	_, err = pub.Verify(oldKey.ID, t0, msg, sigNew)
	require.ErrorIs(t, err, keyring.ErrMismatch)
	assert.True(t, errors.Is(err, keyring.ErrMismatch))
}

func TestLiveSwapsRings(t *testing.T) {
	a, err := keyring.Single(secret(1))
	require.NoError(t, err)
	b, _, err := a.Rotate(secret(2), t0, time.Hour)
	require.NoError(t, err)
	l := keyring.NewLive(a)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 1000 {
			_ = l.Ring().Current()
		}
	}()
	l.Set(b)
	l.Set(nil)
	<-done
	assert.Same(t, b, l.Ring())
}
