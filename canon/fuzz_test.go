package canon_test

import (
	"bytes"
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
		// Parse is Canonicalize and ParseValue in one: it refuses the
		// same inputs, and its Value is the one ParseValue reads from the
		// canonical text, node for node.
		v, perr := canon.Parse(in)
		require.Equal(t, err == nil, perr == nil, "Parse and Canonicalize disagree: %v / %v", perr, err)
		if err == nil {
			require.Equal(t, string(out), v.Canonical())
			pv, err := canon.ParseValue(out)
			require.NoError(t, err)
			requireSameTree(t, pv, v)
		}
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

// FuzzParseValue checks, for any input: ParseValue accepts exactly the
// inputs Canonicalize leaves unchanged, refuses the others with the same
// sentinel as Canonicalize or with ErrNotCanonical, and what it accepts is
// jcs.Transform's output too and decodes, value by value, as encoding/json
// decodes it.
func FuzzParseValue(f *testing.F) {
	for seed := range uint64(8) {
		g := newGen(seed)
		doc := g.value(3, 4)
		f.Add(doc.noisy(g.r))
		c, err := canon.Canonicalize(doc.plain())
		require.NoError(f, err)
		f.Add(c)
	}
	for _, s := range []string{`{"a":1,"\u0061":2}`, `{"b":1,"a":2}`, `[1.0]`, `"\u00e9"`, `{"":{"":[]}}`, `[1e+21,-0.5]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := canon.ParseValue(in)
		c, cerr := canon.Canonicalize(in)
		switch {
		case cerr != nil:
			require.Error(t, err, "accepted what Canonicalize refuses")
			for _, s := range refusalSentinels {
				if errors.Is(cerr, s) {
					require.ErrorIs(t, err, s)
				}
			}
			return
		case string(c) != string(in):
			require.ErrorIs(t, err, canon.ErrNotCanonical)
			return
		}
		require.NoError(t, err)
		require.Equal(t, string(in), v.Canonical())
		viaJCS, err := jcs.Transform(in)
		require.NoError(t, err)
		require.Equal(t, string(in), string(viaJCS))
		sameAsJSON(t, v, decodeJSON(t, in), "")
		n := 0
		v.Walk(func(canon.Value) bool { n++; return true })
		require.Positive(t, n)
	})
}

// FuzzParseSealed checks, for any input, that ParseSealed accepts exactly
// the canonical effects: the bytes that encoding/json decodes into an
// Effect and that jcs.Transform of that Effect marshalled gives back. What
// it accepts reads back to the same bytes, digest and effect, and Seal of
// that effect writes the same bytes.
func FuzzParseSealed(f *testing.F) {
	for seed := range uint64(8) {
		s, err := canon.Seal(newGen(seed).effect())
		require.NoError(f, err)
		f.Add(s.Bytes())
	}
	s, err := canon.Seal(sampleEffect())
	require.NoError(f, err)
	good := string(s.Bytes())
	f.Add([]byte(good))
	f.Add([]byte(strings.Replace(good, `"size":15`, `"size":1.5`, 1)))
	f.Add([]byte(strings.Replace(good, `"delegations":["ops-team"]`, `"delegations":null`, 1)))
	f.Add([]byte(strings.Replace(good, `"tool"`, `"Tool"`, 1)))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := canon.ParseSealed(in)
		want, ok := effectOracle(in)
		if !ok {
			require.Error(t, err, "accepted what is not a canonical effect: %q", in)
			return
		}
		require.NoError(t, err, "refused a canonical effect: %q", in)
		require.Equal(t, string(in), string(got.Bytes()))
		require.Equal(t, canon.Sum(in), got.Digest())
		require.Equal(t, want, got.Effect())
		again, err := canon.Seal(got.Effect())
		require.NoError(t, err)
		require.Equal(t, string(in), string(again.Bytes()))
	})
}

// FuzzSealArgs checks, for any arguments and effect fields, that sealing
// the arguments parsed by Parse (whose first seal writes the effect around
// the parsed text) gives what Seal gives from the raw arguments: the same
// refusal or the same bytes and digest; that a second seal of the same
// Value (which copies) gives its own effect's bytes and leaves the first
// unchanged; and that ParseSealed reads the bytes back.
func FuzzSealArgs(f *testing.F) {
	for seed := range uint64(8) {
		g := newGen(seed)
		e := g.effect()
		f.Add([]byte(e.Args), e.Tool, e.Audience)
	}
	f.Add([]byte(`{"b":1,"a":"`+strings.Repeat("x", 300)+`"}`), "send_email", strings.Repeat("long", 100))
	f.Add([]byte(` {"z":[1e2,{"y":"\u00e9"}],"a":null}`), "t", "")
	f.Add([]byte(`[1]`), "t", "a")
	f.Fuzz(func(t *testing.T, args []byte, tool, audience string) {
		e := sampleEffect()
		e.Args, e.Tool, e.Audience = args, tool, audience
		want, werr := canon.Seal(e)
		v, perr := canon.Parse(args)
		if perr != nil {
			require.Error(t, werr, "Seal accepted arguments Parse refuses: %q", args)
			return
		}
		got, err := canon.SealArgs(e, v)
		require.Equal(t, werr == nil, err == nil, "Seal and SealArgs disagree: %v / %v", werr, err)
		if err != nil {
			return
		}
		require.Equal(t, string(want.Bytes()), string(got.Bytes()))
		require.Equal(t, want.Digest(), got.Digest())
		other := e
		other.Step, other.Args = e.Step+"-again", args
		wantOther, err := canon.Seal(other)
		require.NoError(t, err)
		again, err := canon.SealArgs(other, v)
		require.NoError(t, err)
		require.Equal(t, string(wantOther.Bytes()), string(again.Bytes()))
		require.Equal(t, string(want.Bytes()), string(got.Bytes()), "a second seal changed the first")
		back, err := canon.ParseSealed(got.Bytes())
		require.NoError(t, err)
		require.Equal(t, got.Digest(), back.Digest())
		require.Equal(t, v.Canonical(), back.Args().Canonical())
	})
}

// effectOracle decodes in with encoding/json and accepts it when it is
// canonical and jcs.Transform of the decoded effect, marshalled, is in.
func effectOracle(in []byte) (canon.Effect, bool) {
	c, err := canon.Limits{MaxBytes: canon.DefaultMaxBytes + 64<<10, MaxDepth: canon.DefaultMaxDepth + 1}.Canonicalize(in)
	if err != nil || string(c) != string(in) {
		return canon.Effect{}, false
	}
	var e canon.Effect
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.DisallowUnknownFields()
	if dec.Decode(&e) != nil || len(e.Args) == 0 || e.Args[0] != '{' || len(e.Args) > canon.DefaultMaxBytes {
		return canon.Effect{}, false
	}
	if e.Refs == nil || e.Principal.Delegations == nil {
		return canon.Effect{}, false
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return canon.Effect{}, false
	}
	out, err := jcs.Transform(raw)
	if err != nil || string(out) != string(in) {
		return canon.Effect{}, false
	}
	return e, true
}
