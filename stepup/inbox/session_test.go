package inbox

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
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

func TestSessionRoundTrip(t *testing.T) {
	ss := newSessions(testKey)
	who := passkey.SignedIn{User: "user:erin", CredentialID: []byte{1, 2, 3}}
	value, s, err := ss.seal(who, t0.Add(30*time.Minute))
	require.NoError(t, err)
	got, err := ss.open(value)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	assert.Equal(t, who, got.who())
	assert.True(t, ss.live(got, t0))
	assert.True(t, ss.live(got, t0.Add(30*time.Minute-time.Second)))
	assert.False(t, ss.live(got, t0.Add(30*time.Minute)), "expired at its expiry")

	ss.end(got, t0)
	assert.False(t, ss.live(got, t0), "signed out")
	again, s2, err := ss.seal(who, t0.Add(30*time.Minute))
	require.NoError(t, err)
	assert.NotEqual(t, value, again, "each sign-in is a session of its own")
	assert.True(t, ss.live(s2, t0), "signing out one session leaves the others")

	_, err = newSessions([]byte("another key of at least thirty-two bytes")).open(value)
	assert.ErrorIs(t, err, errNoSession, "another key's cookie")
}

func TestSessionRefusesOversizedFields(t *testing.T) {
	ss := newSessions(testKey)
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
	ss := newSessions(testKey)
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

func TestSessionEndedIsBounded(t *testing.T) {
	ss := newSessions(testKey)
	var first session
	for i := range maxEnded + 10 {
		_, s, err := ss.seal(passkey.SignedIn{User: "user:erin", CredentialID: []byte{1}}, t0.Add(time.Hour+time.Duration(i)*time.Second))
		require.NoError(t, err)
		if i == 0 {
			first = s
		}
		ss.end(s, t0)
	}
	assert.LessOrEqual(t, len(ss.ended), maxEnded)
	assert.True(t, ss.live(first, t0), "past the bound, the sign-out expiring first is forgotten")
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
	ss := newSessions(testKey)
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
