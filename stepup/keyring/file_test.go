package keyring_test

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/keyring"
)

var (
	hexA = "hex:" + strings.Repeat("aa", 32)
	hexB = "hex:" + strings.Repeat("bb", 32)
)

func TestParseReadsEveryState(t *testing.T) {
	file := "# comment\n\n" +
		"old retired " + hexA + " 2026-12-03T01:00:00Z\r\n" +
		"-\tcurrent\tbase64:" + strings.Repeat("zMzM", 11) + "\n" +
		"next verify " + hexB + "\n"
	r, err := keyring.Parse("keys", []byte(file))
	require.NoError(t, err)
	keys := r.Keys()
	require.Len(t, keys, 3)
	assert.Equal(t, keyring.Retired, keys[0].State)
	assert.Equal(t, "2026-12-03T01:00:00Z", keys[0].GraceUntil.UTC().Format("2006-01-02T15:04:05Z07:00"))
	assert.Equal(t, keyring.DefaultID(keys[1].Secret), keys[1].ID)
	assert.Equal(t, keys[1].ID, r.Current().ID)
	assert.Equal(t, keyring.Verify, keys[2].State)

	again, err := keyring.Parse("keys", keyring.Encode(r))
	require.NoError(t, err)
	assert.Equal(t, r.Keys(), again.Keys())
}

func TestParseErrorsNameFileLineAndField(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		line       int
		field      string
	}{
		{"state", "a bogus " + hexA, 1, "state"},
		{"secret prefix", "a current " + strings.Repeat("aa", 32), 1, "secret"},
		{"secret hex", "a current hex:zz" + strings.Repeat("aa", 32), 1, "secret"},
		{"secret short", "a current hex:aabb", 1, "secret"},
		{"secret base64", "a current base64:!!!", 1, "secret"},
		{"id", "a/b current " + hexA, 1, "id"},
		{"grace missing", "a current " + hexA + "\nb retired " + hexB, 2, "grace-until"},
		{"grace on current", "a current " + hexA + " 2026-12-03T01:00:00Z", 1, "grace-until"},
		{"grace malformed", "a current " + hexA + "\nb retired " + hexB + " tomorrow", 2, "grace-until"},
		{"too few fields", "a current", 1, ""},
		{"too many fields", "a retired " + hexA + " 2026-12-03T01:00:00Z extra", 1, ""},
		{"duplicate id", "a current " + hexA + "\n# x\na verify " + hexB, 3, ""},
		{"two current", "a current " + hexA + "\nb current " + hexB, 2, ""},
		{"no current", "a verify " + hexA, 0, ""},
		{"empty", "# nothing\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keyring.Parse("keys.txt", []byte(tc.file))
			require.ErrorIs(t, err, keyring.ErrInvalid)
			var fe *keyring.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "keys.txt", fe.File)
			assert.Equal(t, tc.line, fe.Line)
			assert.Equal(t, tc.field, fe.Field)
			assert.True(t, strings.HasPrefix(err.Error(), "keys.txt"), err.Error())
			assert.NotContains(t, err.Error(), strings.Repeat("aa", 8))
			assert.NotContains(t, err.Error(), strings.Repeat("bb", 8))
		})
	}
}

func TestParseBoundsTheFile(t *testing.T) {
	_, err := keyring.Parse("keys", make([]byte, keyring.MaxFileSize+1))
	require.ErrorIs(t, err, keyring.ErrInvalid)
	var b strings.Builder
	for i := range keyring.MaxKeys + 1 {
		state := "verify"
		if i == 0 {
			state = "current"
		}
		b.WriteString("k" + hex.EncodeToString([]byte{byte(i)}) + " " + state + " hex:" + strings.Repeat(hex.EncodeToString([]byte{byte(i)}), 32) + "\n")
	}
	_, err = keyring.Parse("keys", []byte(b.String()))
	require.ErrorIs(t, err, keyring.ErrInvalid)
	assert.Contains(t, err.Error(), "more than 64 keys")
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("a current " + hexA + "\nb retired " + hexB + " 2026-12-03T01:00:00Z\n"))
	f.Add([]byte("- current base64:" + strings.Repeat("zMzM", 11)))
	f.Add([]byte("a verify " + hexA))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := keyring.Parse("fuzz", b)
		if err != nil {
			assert.ErrorIs(t, err, keyring.ErrInvalid)
			return
		}
		again, err := keyring.Parse("fuzz", keyring.Encode(r))
		require.NoError(t, err)
		assert.Equal(t, len(r.Keys()), len(again.Keys()))
		assert.Equal(t, r.Current().ID, again.Current().ID)
	})
}

func TestPublicFileRoundTripsAndVerifies(t *testing.T) {
	r, err := keyring.Single(secret(1))
	require.NoError(t, err)
	old := r.Current()
	r, _, err = r.Rotate(secret(2), t0, time.Hour)
	require.NoError(t, err)
	text := keyring.EncodePublic(r.Public())
	assert.NotContains(t, string(text), hex.EncodeToString(secret(1)))
	assert.NotContains(t, string(text), hex.EncodeToString(secret(2)))
	p, err := keyring.ParsePublic("keys.pub", text)
	require.NoError(t, err)
	assert.Equal(t, r.Public().Keys(), p.Keys())
	sig := sign(old, []byte("m"))
	_, err = p.Verify(old.ID, t0, []byte("m"), sig)
	require.NoError(t, err)
	_, err = p.Verify(old.ID, t0.Add(time.Hour), []byte("m"), sig)
	require.ErrorIs(t, err, keyring.ErrRetired)
}

func TestParsePublicErrorsNameLineAndField(t *testing.T) {
	pub := "ed25519:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, file string
		line       int
		field      string
	}{
		{"secret instead of key", "a current " + hexA, 1, "public-key"},
		{"short key", "a current ed25519:abcd", 1, "public-key"},
		{"derived id", "- current " + pub, 1, "id"},
		{"state", "a later " + pub, 1, "state"},
		{"grace", "a retired " + pub, 1, "grace-until"},
		{"duplicate", "a current " + pub + "\na verify ed25519:" + strings.Repeat("cd", 32), 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keyring.ParsePublic("keys.pub", []byte(tc.file))
			var fe *keyring.FileError
			require.ErrorAs(t, err, &fe)
			require.ErrorIs(t, err, keyring.ErrInvalid)
			assert.Equal(t, tc.line, fe.Line)
			assert.Equal(t, tc.field, fe.Field)
		})
	}
}

func FuzzParsePublic(f *testing.F) {
	f.Add([]byte("a current ed25519:" + strings.Repeat("ab", 32) + "\n"))
	f.Add([]byte("a retired ed25519:" + strings.Repeat("ab", 32) + " 2026-12-03T01:00:00Z\nb verify ed25519:" + strings.Repeat("cd", 32)))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := keyring.ParsePublic("fuzz", b)
		if err != nil {
			assert.ErrorIs(t, err, keyring.ErrInvalid)
			return
		}
		again, err := keyring.ParsePublic("fuzz", keyring.EncodePublic(p))
		require.NoError(t, err)
		assert.Equal(t, len(p.Keys()), len(again.Keys()))
	})
}

// badLines are key lines each refused on one field, generated over the
// ways an id, a state, a secret and a grace end can be wrong.
func badLines(secretOK string) map[string]string {
	out := map[string]string{}
	for _, id := range []string{"key/1", "a:b", "é", "ключ", "a@b", "a,b", "a\x00b", "a\u200bb", "a\ufeffb", "'a'",
		strings.Repeat("a", keyring.MaxIDSize+1), strings.Repeat("é", keyring.MaxIDSize)} {
		out["id "+id] = id + " current " + secretOK
	}
	for _, st := range []string{"Current", "CURRENT", "active", "retire", "-", "current,"} {
		out["state "+st] = "a " + st + " " + secretOK
	}
	for _, sec := range []string{"aa", "hex:", "hex:zz", "HEX:aa", "base64:", "base64:!!", "base64:" + strings.Repeat("A", 7),
		"hex:" + strings.Repeat("ab", 8), "hex:" + strings.Repeat("ab", 2000)} {
		out["secret "+sec[:min(len(sec), 12)]] = "a current " + sec
	}
	for _, g := range []string{"tomorrow", "2026-12-03", "2026-12-03 01:00:00", "1767225600"} {
		out["grace "+g] = "a current " + secretOK + "\nb retired " + secretOK + " " + g
	}
	return out
}

// TestParseGivesTheReasonOnce: every refusal of a line says why, in
// words beyond ErrInvalid's, and says ErrInvalid's words once: a reason
// that already wraps ErrInvalid (ValidID's) is not dropped for it, nor
// prefixed with it again.
func TestParseGivesTheReasonOnce(t *testing.T) {
	for name, line := range badLines(hexA) {
		t.Run(name, func(t *testing.T) {
			_, err := keyring.Parse("ring.keys", []byte(line))
			require.ErrorIs(t, err, keyring.ErrInvalid)
			assertReasonOnce(t, err)
			var fe *keyring.FileError
			require.ErrorAs(t, err, &fe)
			assert.Positive(t, fe.Line)
			if strings.HasPrefix(name, "id ") {
				assert.Equal(t, "id", fe.Field)
				assert.Contains(t, err.Error(), "key id", "the reason an id is refused")
			}
		})
	}
}

// TestParsePublicGivesTheReasonOnce: the same for a public ring.
func TestParsePublicGivesTheReasonOnce(t *testing.T) {
	for name, line := range badLines("ed25519:" + strings.Repeat("ab", 32)) {
		t.Run(name, func(t *testing.T) {
			_, err := keyring.ParsePublic("ring.pub", []byte(line))
			require.ErrorIs(t, err, keyring.ErrInvalid)
			assertReasonOnce(t, err)
		})
	}
}

// assertReasonOnce checks err says ErrInvalid's words once and more
// after them.
func assertReasonOnce(t *testing.T, err error) {
	t.Helper()
	msg, sentinel := err.Error(), keyring.ErrInvalid.Error()
	assert.Equal(t, 1, strings.Count(msg, sentinel), msg)
	_, reason, _ := strings.Cut(msg, sentinel)
	assert.Greater(t, len(strings.TrimLeft(reason, ": ")), 3, "no reason: %s", msg)
}

// TestParseSaysByteOrderMark: a file an editor saved with a byte order
// mark is refused saying so, not as a bad id.
func TestParseSaysByteOrderMark(t *testing.T) {
	for _, file := range []string{"\ufeff- current " + hexA, "\ufeff# comment\n- current " + hexA, "\ufeff"} {
		_, err := keyring.Parse("ring.keys", []byte(file))
		require.ErrorIs(t, err, keyring.ErrInvalid)
		assert.ErrorContains(t, err, "ring.keys:1: ")
		assert.ErrorContains(t, err, "byte order mark")
		assertReasonOnce(t, err)
	}
}
