package inbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/passkey"
)

var (
	testKey = []byte("inbox tests: a session key of 32+ bytes")
	t0      = time.Date(2026, 10, 30, 9, 0, 0, 0, time.UTC)
)

// errDown is the failure of a store that is down.
var errDown = errors.New("the database is down")

// storeRecord keeps sign-outs as the gate's store does, for every
// sessions value given it (every replica), and fails while told to.
type storeRecord struct {
	mu              sync.Mutex
	ended           map[string]bool
	reads           int
	failEnd, failIt bool // writes fail; reads fail
}

func newStoreRecord() *storeRecord { return &storeRecord{ended: map[string]bool{}} }

func recordKey(id []byte, until time.Time) string {
	return string(id) + "|" + until.UTC().Format(time.RFC3339)
}

func (r *storeRecord) EndSession(_ context.Context, id []byte, until time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failEnd {
		return errDown
	}
	r.ended[recordKey(id, until)] = true
	return nil
}

func (r *storeRecord) SessionEnded(_ context.Context, id []byte, until time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	if r.failIt {
		return false, errDown
	}
	return r.ended[recordKey(id, until)], nil
}

func (r *storeRecord) set(f func(r *storeRecord)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

// isLive is ss.live that fails the test on an error.
func isLive(t *testing.T, ss *sessions, s session, now time.Time) bool {
	t.Helper()
	live, err := ss.live(context.Background(), s, now)
	require.NoError(t, err)
	return live
}

func TestSessionRoundTrip(t *testing.T) {
	record := newStoreRecord()
	ss := newSessions(testKey, record)
	who := passkey.SignedIn{User: "user:erin", CredentialID: []byte{1, 2, 3}}
	value, s, err := ss.seal(who, t0.Add(30*time.Minute))
	require.NoError(t, err)
	got, err := ss.open(value)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	assert.Equal(t, who, got.who())
	assert.True(t, isLive(t, ss, got, t0))
	assert.True(t, isLive(t, ss, got, t0.Add(30*time.Minute-time.Second)))
	assert.False(t, isLive(t, ss, got, t0.Add(30*time.Minute)), "expired at its expiry")

	require.NoError(t, ss.end(context.Background(), got, t0))
	assert.False(t, isLive(t, ss, got, t0), "signed out")
	assert.False(t, isLive(t, newSessions(testKey, record), got, t0), "signed out on every replica of the record")
	again, s2, err := ss.seal(who, t0.Add(30*time.Minute))
	require.NoError(t, err)
	assert.NotEqual(t, value, again, "each sign-in is a session of its own")
	assert.True(t, isLive(t, ss, s2, t0), "signing out one session leaves the others")

	_, err = newSessions([]byte("another key of at least thirty-two bytes"), record).open(value)
	assert.ErrorIs(t, err, errNoSession, "another key's cookie")
}

// TestSessionLiveFailsClosed: a session whose sign-outs cannot be read is
// not live (an error, not a yes); one this process knows it signed out is
// refused without asking the store.
func TestSessionLiveFailsClosed(t *testing.T) {
	record := newStoreRecord()
	ss := newSessions(testKey, record)
	_, s, err := ss.seal(passkey.SignedIn{User: "user:erin", CredentialID: []byte{1}}, t0.Add(time.Hour))
	require.NoError(t, err)
	record.set(func(r *storeRecord) { r.failIt = true })
	live, err := ss.live(context.Background(), s, t0)
	assert.ErrorIs(t, err, errDown)
	assert.False(t, live)

	record.set(func(r *storeRecord) { r.failIt = false })
	require.NoError(t, ss.end(context.Background(), s, t0))
	record.set(func(r *storeRecord) { r.failIt, r.reads = true, 0 })
	live, err = ss.live(context.Background(), s, t0)
	assert.NoError(t, err, "known here: the store is not asked")
	assert.False(t, live)
	assert.Zero(t, record.reads)
}

// TestSessionUnstoredSignOutIsNeverForgotten: sign-outs the store refused
// are refused here, past the bound too, and stored once their cookie
// comes back after the store recovers, for the other replicas.
func TestSessionUnstoredSignOutIsNeverForgotten(t *testing.T) {
	record := newStoreRecord()
	ss := newSessions(testKey, record)
	record.set(func(r *storeRecord) { r.failEnd = true })
	var out []session
	for i := range maxEnded + 10 {
		_, s, err := ss.seal(passkey.SignedIn{User: "user:erin", CredentialID: []byte{1}}, t0.Add(time.Hour+time.Duration(i)*time.Second))
		require.NoError(t, err)
		assert.ErrorIs(t, ss.end(context.Background(), s, t0), errDown)
		out = append(out, s)
	}
	for _, s := range out {
		require.False(t, isLive(t, ss, s, t0), "a sign-out the store refused was forgotten")
	}
	other := newSessions(testKey, record)
	assert.True(t, isLive(t, other, out[0], t0), "the store does not have it yet")

	record.set(func(r *storeRecord) { r.failEnd = false })
	assert.False(t, isLive(t, ss, out[0], t0), "its cookie came back: stored now")
	assert.False(t, isLive(t, other, out[0], t0), "ended on the other replica too")
	assert.True(t, isLive(t, other, out[1], t0), "one whose cookie has not come back yet")
	assert.False(t, isLive(t, ss, out[1], t0.Add(time.Hour+time.Second)), "expired anyway")
}

func TestSessionRefusesOversizedFields(t *testing.T) {
	ss := newSessions(testKey, newStoreRecord())
	for name, who := range map[string]passkey.SignedIn{
		"no user":         {CredentialID: []byte{1}},
		"no credential":   {User: "user:erin"},
		"long user":       {User: "user:" + strings.Repeat("e", maxUserBytes), CredentialID: []byte{1}},
		"long credential": {User: "user:erin", CredentialID: make([]byte, maxCredBytes+1)},
	} {
		_, _, err := ss.seal(who, t0)
		assert.ErrorIs(t, err, errNoSession, name)
	}
	_, _, err := ss.seal(passkey.SignedIn{User: "user:" + strings.Repeat("e", maxUserBytes-5),
		CredentialID: make([]byte, maxCredBytes)}, t0)
	assert.NoError(t, err, "the largest session fits a cookie")
}

// TestSessionTamperProperty: for generated sessions, the cookie opens to
// the same session, and changing any one byte of it (or dropping or
// adding one) opens nothing.
func TestSessionTamperProperty(t *testing.T) {
	ss := newSessions(testKey, newStoreRecord())
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 0x1b))
		user := "user:" + strings.Repeat(string(rune('a'+r.IntN(26))), 1+r.IntN(60))
		cred := make([]byte, 1+r.IntN(200))
		for i := range cred {
			cred[i] = byte(r.Uint32())
		}
		exp := t0.Add(time.Duration(1+r.IntN(1e6)) * time.Second)
		value, s, err := ss.seal(passkey.SignedIn{User: user, CredentialID: cred}, exp)
		require.NoError(t, err)
		got, err := ss.open(value)
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, s, got, "seed %d", seed)

		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(value, cookieVersion))
		require.NoError(t, err)
		i := r.IntN(len(raw))
		bad := bytes.Clone(raw)
		bad[i] ^= byte(1 + r.IntN(255))
		_, err = ss.open(cookieVersion + base64.RawURLEncoding.EncodeToString(bad))
		assert.ErrorIs(t, err, errNoSession, "seed %d: byte %d", seed, i)
		_, err = ss.open(cookieVersion + base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]))
		assert.ErrorIs(t, err, errNoSession, "seed %d: one byte short", seed)
		_, err = ss.open(value + "A")
		assert.ErrorIs(t, err, errNoSession, "seed %d: one character more", seed)
	}
}

// TestSessionEndedIsBounded: this process remembers at most maxEnded
// sign-outs, and forgetting one revives no session: the store still has
// it, whichever sessions expire first.
func TestSessionEndedIsBounded(t *testing.T) {
	for _, order := range []string{"later sessions expire later", "later sessions expire sooner"} {
		t.Run(order, func(t *testing.T) {
			record := newStoreRecord()
			ss := newSessions(testKey, record)
			var out []session
			for i := range maxEnded + 10 {
				d := time.Duration(i) * time.Second
				if order == "later sessions expire sooner" {
					d = -d
				}
				_, s, err := ss.seal(passkey.SignedIn{User: "user:erin", CredentialID: []byte{1}}, t0.Add(4*time.Hour+d))
				require.NoError(t, err)
				require.NoError(t, ss.end(context.Background(), s, t0))
				out = append(out, s)
				assert.LessOrEqual(t, len(ss.ended), maxEnded)
			}
			assert.Len(t, ss.ended, maxEnded, "the bound")
			for i, s := range out {
				require.False(t, isLive(t, ss, s, t0), "sign-out %d forgotten, and the session came back", i)
			}
		})
	}
}

func TestDecodeSignIn(t *testing.T) {
	good := `{"state":"s","credential":{"id":"x"}}`
	b, err := decodeSignIn([]byte(good))
	require.NoError(t, err)
	assert.Equal(t, "s", b.State)
	assert.JSONEq(t, `{"id":"x"}`, string(b.Credential))
	for _, body := range []string{
		``, `null`, `[]`, `"x"`, `{}`,
		`{"state":"s"}`,
		`{"credential":{}}`,
		`{"state":"s","credential":{},"extra":1}`,
		`{"state":"s","state":"t","credential":{}}`,
		`{"State":"s","credential":{}}`,
		`{"state":"s","credential":"x"}`,
		`{"state":"","credential":{}}`,
		`{"state":1,"credential":{}}`,
		`{"state":"s","credential":{}} {}`,
		`{"state":"s","credential":{}`,
	} {
		_, err := decodeSignIn([]byte(body))
		assert.Error(t, err, body)
	}
}

// FuzzDecodeSignIn: decoding never panics, and what it accepts is an
// object of exactly the two members.
func FuzzDecodeSignIn(f *testing.F) {
	f.Add([]byte(`{"state":"s","credential":{"id":"x"}}`))
	f.Add([]byte(`{"state":"s","state":"t","credential":{}}`))
	f.Add([]byte(`{"credential":{},"state":"\u0000"}`))
	f.Add([]byte(`[{"state":"s"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := decodeSignIn(body)
		if err != nil {
			return
		}
		keys, err := topKeys(body)
		if err != nil || len(keys) != 2 || b.State == "" || len(b.Credential) == 0 || b.Credential[0] != '{' {
			t.Fatalf("accepted %q", body)
		}
	})
}

// FuzzOpenSession: opening a cookie never panics, and only a cookie this
// key sealed opens.
func FuzzOpenSession(f *testing.F) {
	ss := newSessions(testKey, newStoreRecord())
	value, _, err := ss.seal(passkey.SignedIn{User: "user:erin", CredentialID: []byte{1, 2}}, t0)
	require.NoError(f, err)
	f.Add(value)
	f.Add("v1.")
	f.Add("v1." + strings.Repeat("A", 80))
	f.Add(value[:len(value)-3])
	f.Fuzz(func(t *testing.T, value string) {
		s, err := ss.open(value)
		if err != nil {
			return
		}
		raw, derr := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(value, cookieVersion))
		if derr != nil || !bytes.Equal(raw[len(raw)-32:], ss.mac(raw[:len(raw)-32])) {
			t.Fatalf("opened a cookie without this key's MAC: %q", value)
		}
		if s.user == "" || len(s.cred) == 0 {
			t.Fatalf("opened an empty session from %q", value)
		}
	})
}
