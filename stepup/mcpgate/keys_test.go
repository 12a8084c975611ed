package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/plug"
)

// foldingRunes enumerates every rune with a simple fold orbit of more
// than itself, with its orbit.
func foldingRunes() map[rune][]rune {
	out := map[rune][]rune{}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.SimpleFold(r) == r {
			continue
		}
		orbit := []rune{r}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			orbit = append(orbit, f)
		}
		out[r] = orbit
	}
	return out
}

// naiveTwins is the check an ASCII-only reader of the problem would
// write: keys equal once ASCII letters are lower-cased.
func naiveTwins(a, b string) bool {
	lower := func(s string) string {
		return strings.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, s)
	}
	return lower(a) == lower(b)
}

// nest puts the object with members a and b, among others, at depth d
// of an argument object, first or last among its members.
func nest(a, b string, d int, last bool) []byte {
	members := []string{fmt.Sprintf("%q:1", a), `"m":true`, fmt.Sprintf("%q:2", b)}
	if last {
		members = []string{`"m":true`, fmt.Sprintf("%q:1", a), fmt.Sprintf("%q:2", b)}
	}
	obj := "{" + strings.Join(members, ",") + "}"
	for i := range d {
		if i%2 == 0 {
			obj = `{"z":0,"inner":` + obj + `}`
		} else {
			obj = `[0,` + obj + `]`
		}
	}
	if d%2 == 0 {
		return []byte(obj)
	}
	return []byte(`{"v":` + obj + `}`)
}

// refusedByCanon reports whether canon refuses raw's keys as duplicates:
// it does so for two supplementary-plane keys that differ after their
// shared first UTF-16 unit, which refuses such twins before the key
// check sees them.
func refusedByCanon(raw []byte) bool {
	_, err := canon.Canonicalize(raw)
	return errors.Is(err, canon.ErrDuplicateKey)
}

func parsed(t *testing.T, raw []byte) canon.Value {
	t.Helper()
	c, err := canon.Canonicalize(raw)
	require.NoError(t, err, "%s", raw)
	v, err := canon.ParseValue(c)
	require.NoError(t, err)
	return v
}

// TestFoldKeyIsTheGoReadersFold: for every rune with a fold orbit, and
// every pair of its orbit, foldKey agrees with strings.EqualFold and
// bytes.EqualFold (what encoding/json matches by), and keys of runes of
// different orbits differ.
func TestFoldKeyIsTheGoReadersFold(t *testing.T) {
	runes := foldingRunes()
	require.Greater(t, len(runes), 2000, "Unicode has some 2,800 runes that fold")
	for r, orbit := range runes {
		for _, f := range orbit {
			a, b := "x"+string(r)+"y", "x"+string(f)+"y"
			require.True(t, strings.EqualFold(a, b))
			require.True(t, bytes.EqualFold([]byte(a), []byte(b)))
			require.Equal(t, string(foldKey(nil, a)), string(foldKey(nil, b)), "%U %U", r, f)
		}
	}
	// Random names over a small alphabet of folding runes, '_' and '-':
	// equal folds exactly when EqualFold says so once '_' and '-' are
	// dropped.
	alphabet := []rune{'s', 'S', 'ſ', 'k', 'K', 'K', 'a', 'µ', 'μ', 'Μ', 'ß', 'ẞ', '_', '-', 'Σ', 'σ', 'ς'}
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	drop := func(s string) string { return strings.NewReplacer("_", "", "-", "").Replace(s) }
	for range 20000 {
		a, b := gen(), gen()
		assert.Equal(t, strings.EqualFold(drop(a), drop(b)), string(foldKey(nil, a)) == string(foldKey(nil, b)), "%q %q", a, b)
	}
}

// TestFoldedTwinsAtAnyDepth: for every rune with a fold orbit, two keys
// that differ only by that rune and another of its orbit are found, in
// an object at depths 0 to 4 (objects and arrays between), first or
// last among its members; an ASCII-only check misses most of them.
func TestFoldedTwinsAtAnyDepth(t *testing.T) {
	runes := foldingRunes()
	missedByNaive, byCanon := 0, 0
	for r, orbit := range runes {
		f := orbit[1]
		a, b := "k"+string(r), "k"+string(f)
		if !naiveTwins(a, b) {
			missedByNaive++
		}
		for d := range 5 {
			for _, last := range []bool{false, true} {
				raw := nest(a, b, d, last)
				if r >= 0x10000 && refusedByCanon(raw) {
					byCanon++
					continue
				}
				require.True(t, foldedTwins(parsed(t, raw)), "%U and %U at depth %d: %s", r, f, d, raw)
			}
		}
	}
	t.Logf("%d of %d placements refused by canon as duplicate keys first", byCanon, len(runes)*10)
	assert.Greater(t, missedByNaive, len(runes)-60, "an ASCII-only check sees only the 52 ASCII letters")
	// '_' and '-' are ignored as encoding/json/v2 ignores them.
	assert.True(t, foldedTwins(parsed(t, []byte(`{"a":{"to_addr":1,"toAddr":2}}`))))
	assert.True(t, foldedTwins(parsed(t, []byte(`[{"e-mail":1,"EMAIL":2}]`))))
	// Keys of different orbits are not twins, nor equal keys in different
	// objects.
	for _, ok := range []string{`{"a":1,"b":2}`, `{"s":1,"t":{"s":2}}`, `{"ß":1,"ss":2}`, `{"address":1,"addresses":2}`, `[{"k":1},{"K":2}]`} {
		assert.False(t, foldedTwins(parsed(t, []byte(ok))), ok)
	}
}

// TestKeyLimitRefusesASpellingOfALimitedArgument: a top-level key that
// folds to a name the catalog limits, without being it, is refused,
// alone or beside the name itself; the exact name passes. Limited names
// are generated from every folding rune.
func TestKeyLimitRefusesASpellingOfALimitedArgument(t *testing.T) {
	for r, orbit := range foldingRunes() {
		name := "n" + string(r)
		lim := keyLimit([]string{name, "other"})
		exact := parsed(t, fmt.Appendf(nil, `{%q:"ok","x":{"y":1}}`, name))
		require.Empty(t, lim(exact), "%U", r)
		for _, f := range orbit[1:] {
			spelled := "n" + string(f)
			if r >= 0x10000 && refusedByCanon(fmt.Appendf(nil, `{%q:"ok",%q:"evil"}`, name, spelled)) {
				assert.NotEmpty(t, lim(parsed(t, fmt.Appendf(nil, `{%q:"evil"}`, spelled))), "%U for %U alone", f, r)
				continue
			}
			assert.NotEmpty(t, lim(parsed(t, fmt.Appendf(nil, `{%q:"evil"}`, spelled))), "%U for %U alone", f, r)
			assert.NotEmpty(t, lim(parsed(t, fmt.Appendf(nil, `{%q:"ok",%q:"evil"}`, name, spelled))), "%U beside %U", f, r)
		}
	}
	lim := keyLimit([]string{"to_address"})
	assert.NotEmpty(t, lim(parsed(t, []byte(`{"toAddress":"x"}`))))
	assert.Empty(t, lim(parsed(t, []byte(`{"to_address":"x","cc":{"TO":1}}`))))
}

// TestCatalogPolicyRefusesFoldedKeys: through the catalog's policy, the
// long s and Kelvin sign spellings of a limited argument, alone, beside
// it, or twinned deeper in the arguments, are denied; plain arguments
// are allowed unattended.
func TestCatalogPolicyRefusesFoldedKeys(t *testing.T) {
	cat, err := ParseCatalog(strings.NewReader(`{"version":"fold-2","tools":[
		{"name":"notify","class":"external","unattended":true,"allow_domains":{"address":["example.com"]},
		 "max_length":{"kind":16}}]}`))
	require.NoError(t, err)
	pol, err := cat.Policy(nil)
	require.NoError(t, err)
	decide := func(args string) plug.Decision {
		c, err := canon.Canonicalize([]byte(args))
		require.NoError(t, err, args)
		d, err := pol.Decide(context.Background(), plug.Proposal{Tool: "notify", Args: json.RawMessage(c)})
		require.NoError(t, err)
		return d
	}
	assert.Equal(t, plug.Allow, decide(`{"address":"ops@example.com","kind":"alert"}`).Verdict)
	for _, args := range []string{
		`{"addreſs":"mallory@evil.example"}`,
		`{"address":"ops@example.com","addreſs":"mallory@evil.example"}`,
		`{"address":"ops@example.com","ADDRESS":"mallory@evil.example"}`,
		`{"address":"ops@example.com","kind":"a","\u212aind":"` + strings.Repeat("x", 64) + `"}`,
		`{"address":"ops@example.com","meta":{"tag":1,"TAG":2}}`,
		`{"address":"ops@example.com","meta":[{"ſ":1,"s":2}]}`,
	} {
		d := decide(args)
		assert.Equal(t, plug.Deny, d.Verdict, "%s: %s", args, d.Reason)
		assert.True(t, utf8.ValidString(d.Reason))
		assert.NotContains(t, d.Reason, "evil", "a reason never quotes the agent's text")
	}
}

// FuzzFoldedTwins holds foldedTwins to its definition, pairwise
// strings.EqualFold (after dropping '_' and '-') within each object of
// any arguments canon accepts, and foldKey to EqualFold for any names.
func FuzzFoldedTwins(f *testing.F) {
	f.Add([]byte(`{"address":1,"addreſs":2}`), "K", "k")
	f.Add([]byte(`{"a":{"b_c":1,"bC":2}}`), "to_addr", "TOADDR")
	f.Add([]byte(`[{"ß":1,"ẞ":2},{"x":1}]`), "ß", "ss")
	drop := func(s string) string { return strings.NewReplacer("_", "", "-", "").Replace(s) }
	f.Fuzz(func(t *testing.T, raw []byte, a, b string) {
		if utf8.ValidString(a) && utf8.ValidString(b) {
			assert.Equal(t, strings.EqualFold(drop(a), drop(b)), string(foldKey(nil, a)) == string(foldKey(nil, b)), "%q %q", a, b)
		}
		c, err := canon.Canonicalize(raw)
		if err != nil {
			return
		}
		v, err := canon.ParseValue(c)
		require.NoError(t, err)
		want := false
		v.Walk(func(o canon.Value) bool {
			var keys []string
			for k := range o.Members() {
				for _, seen := range keys {
					if strings.EqualFold(drop(seen), drop(k)) {
						want = true
					}
				}
				keys = append(keys, k)
			}
			return true
		})
		assert.Equal(t, want, foldedTwins(v), "%s", c)
	})
}

// BenchmarkKeyLimit measures the key check on plain arguments (the fast
// path) and on arguments with keys outside [a-z0-9].
func BenchmarkKeyLimit(b *testing.B) {
	lim := keyLimit([]string{"to", "amount", "path"})
	for _, c := range []struct{ name, args string }{
		{"plain", `{"to":"ops@example.com","amount":"19.99","body":"hello","meta":{"tags":["a","b"],"level":3}}`},
		{"mixed", `{"to":"ops@example.com","Amount":"19.99","body_text":"hello","meta":{"Tags":["a","b"],"log-level":3}}`},
	} {
		c2, err := canon.Canonicalize([]byte(c.args))
		require.NoError(b, err)
		v, err := canon.ParseValue(c2)
		require.NoError(b, err)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = lim(v)
			}
		})
	}
}
