package canon_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// FuzzCanonicalize checks, for any input: no panic; a refusal is a
// *canon.Error wrapping one sentinel at an offset inside the input; an
// accepted input's output is its own canonical form, decodes to the same
// value as the input, and is byte for byte what jcs.Transform gives.
func FuzzCanonicalize(f *testing.F) {
	fsys := vectors()
	files, err := fs.Glob(fsys, "*put/*.json")
	require.NoError(f, err)
	for _, name := range files {
		b, err := fs.ReadFile(fsys, name)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{
		`{"a":1,"\u0061":2}`, `["\ud83d\ude02","\ud83d"]`, `[9007199254740993]`, `[0.30000000000000001]`,
		`[1e400,1e-400,-0,1.0,1e2,1.5e-07,19.99]`, `{"\uE000":1,"\ud800\udc00":2}`, "\"\xff\"", `{} {}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	for seed := range uint64(8) {
		g := newGen(seed)
		f.Add(g.object(3, 4).noisy(g.r))
	}

	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := canon.Canonicalize(in)
		if err != nil {
			ce, ok := errorsAsCanon(err)
			require.True(t, ok, "refusal is not a *canon.Error: %T %v", err, err)
			require.GreaterOrEqual(t, ce.Offset, 0)
			require.LessOrEqual(t, ce.Offset, len(in))
			n := 0
			for _, s := range refusalSentinels {
				if errors.Is(err, s) {
					n++
				}
			}
			require.Equal(t, 1, n, "sentinels wrapped: %v", err)
			return
		}

		again, err := canon.Canonicalize(out)
		require.NoError(t, err, "output refused: %q", out)
		require.Equal(t, string(out), string(again), "not idempotent")

		var vin, vout any
		require.NoError(t, json.Unmarshal(in, &vin), "accepted what encoding/json refuses: %q", in)
		require.NoError(t, json.Unmarshal(out, &vout))
		require.Equal(t, vin, vout, "output decodes to a different value")

		viaJCS, err := jcs.Transform(in)
		require.NoError(t, err, "accepted what jcs.Transform refuses: %q", in)
		require.Equal(t, string(viaJCS), string(out), "differs from jcs.Transform")
	})
}

// FuzzParseDigest checks that ParseDigest accepts exactly 64 hex characters
// and that what it accepts round-trips through String.
func FuzzParseDigest(f *testing.F) {
	for _, s := range []string{
		strings.Repeat("0", 64), strings.Repeat("ab", 32), strings.Repeat("AB", 32),
		strings.Repeat("g", 64), "", "00", strings.Repeat("0", 65),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := canon.ParseDigest(s)
		raw, hexErr := hex.DecodeString(s)
		valid := hexErr == nil && len(raw) == 32
		if err != nil {
			require.ErrorIs(t, err, canon.ErrBadDigest)
			require.True(t, d.IsZero())
			require.False(t, valid, "refused valid hex")
			return
		}
		require.True(t, valid, "accepted %q", s)
		assert.Equal(t, raw, d[:])
		assert.Equal(t, strings.ToLower(s), d.String())
		back, err := canon.ParseDigest(d.String())
		require.NoError(t, err)
		assert.True(t, back.Equal(d))
	})
}
