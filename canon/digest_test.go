package canon_test

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

func TestDigestText(t *testing.T) {
	d := canon.Sum([]byte(`{}`))
	want := "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
	assert.Equal(t, want, d.String())
	assert.Equal(t, sha256.Sum256([]byte(`{}`)), [32]byte(d))
	assert.Equal(t, want[:12], d.Short())

	for _, s := range []string{want, strings.ToUpper(want)} {
		p, err := canon.ParseDigest(s)
		require.NoError(t, err)
		assert.Equal(t, d, p)
		assert.Equal(t, want, p.String(), "String is always lowercase")
	}

	text, err := d.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, want, string(text))
	var back canon.Digest
	require.NoError(t, back.UnmarshalText(text))
	assert.Equal(t, d, back)

	// Through encoding/json, as receipts carry it.
	type holder struct {
		Digest canon.Digest `json:"digest"`
	}
	j, err := json.Marshal(holder{d})
	require.NoError(t, err)
	assert.Equal(t, `{"digest":"`+want+`"}`, string(j))
	var h holder
	require.NoError(t, json.Unmarshal(j, &h))
	assert.Equal(t, d, h.Digest)
}

func TestParseDigestRefuses(t *testing.T) {
	good := strings.Repeat("ab", 32)
	for name, s := range map[string]string{
		"empty":        "",
		"short":        good[:63],
		"long":         good + "a",
		"non-hex":      good[:62] + "zz",
		"space":        " " + good[1:],
		"prefix":       "0x" + good[2:],
		"sha256 label": "sha256:" + good,
		"multibyte":    good[:62] + "é",
	} {
		t.Run(name, func(t *testing.T) {
			d, err := canon.ParseDigest(s)
			assert.ErrorIs(t, err, canon.ErrBadDigest)
			assert.True(t, d.IsZero())
			if len(s) > 8 {
				assert.NotContains(t, err.Error(), s[len(s)-8:], "error quotes the input")
			}
			var u canon.Digest
			assert.ErrorIs(t, u.UnmarshalText([]byte(s)), canon.ErrBadDigest)
			assert.True(t, u.IsZero(), "UnmarshalText leaves the digest unchanged on error")
		})
	}
	var h struct{ D canon.Digest }
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"D":"00"}`), &h), canon.ErrBadDigest)
}

func TestDigestEqual(t *testing.T) {
	a := canon.Sum([]byte("a"))
	assert.True(t, a.Equal(a))
	assert.True(t, a.Equal(canon.Sum([]byte("a"))))
	// A difference in any single byte, first or last included, is seen.
	for i := range len(a) {
		b := a
		b[i] ^= 0x80
		assert.False(t, a.Equal(b), "byte %d", i)
		assert.False(t, b.Equal(a), "byte %d", i)
	}
	var zero canon.Digest
	assert.True(t, zero.IsZero())
	assert.False(t, a.IsZero())
	assert.True(t, zero.Equal(canon.Digest{}))
}
