package canon_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// sameAsJSON checks v against x, the same text decoded by encoding/json
// with UseNumber: kinds, member keys and count, string contents, and
// numbers as exact decimals.
func sameAsJSON(t testing.TB, v canon.Value, x any, path string) {
	t.Helper()
	switch x := x.(type) {
	case nil:
		require.Equal(t, canon.KindNull, v.Kind(), path)
	case bool:
		require.Equal(t, canon.KindBool, v.Kind(), path)
		require.Equal(t, x, v.Bool(), path)
	case string:
		require.Equal(t, canon.KindString, v.Kind(), path)
		require.Equal(t, x, v.String(), path)
	case json.Number:
		require.Equal(t, canon.KindNumber, v.Kind(), path)
		c, err := canon.CompareDecimal(v.Number(), string(x))
		require.NoError(t, err, path)
		require.Zero(t, c, path)
	case []any:
		require.Equal(t, canon.KindArray, v.Kind(), path)
		require.Equal(t, len(x), v.Len(), path)
		for i, e := range v.Elems() {
			sameAsJSON(t, e, x[i], path+"/"+strconv.Itoa(i))
		}
	case map[string]any:
		require.Equal(t, canon.KindObject, v.Kind(), path)
		require.Equal(t, len(x), v.Len(), path)
		n := 0
		for k, m := range v.Members() {
			want, ok := x[k]
			require.True(t, ok, "%s: key not in the decoded object", path)
			sameAsJSON(t, m, want, path+"/"+k)
			got, ok := v.Get(k)
			require.True(t, ok)
			require.True(t, got.Equal(m))
			n++
		}
		require.Equal(t, len(x), n, path)
	default:
		t.Fatalf("%s: unexpected %T", path, x)
	}
}

func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	require.NoError(t, dec.Decode(&x))
	return x
}

// TestParseValueOverSpellings: whatever spelling a generated document
// had, its canonical form parses into a Value that encoding/json agrees
// with and whose canonical text is that form.
func TestParseValueOverSpellings(t *testing.T) {
	for seed := range uint64(300) {
		g := newGen(seed)
		doc := g.value(4, 5)
		c, err := canon.Canonicalize(doc.noisy(g.r))
		require.NoError(t, err)
		v, err := canon.ParseValue(c)
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, string(c), v.Canonical())
		sameAsJSON(t, v, decodeJSON(t, c), "")
		out, err := v.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, c, out, "MarshalJSON gives the canonical text")
	}
}

// flatten lists every value below v in document order, each as its kind,
// member key, decoded text, canonical text and length.
func flatten(v canon.Value) []string {
	var out []string
	v.Walk(func(x canon.Value) bool {
		k, member := x.Key()
		out = append(out, fmt.Sprintf("%v %v %q %q %q %d", x.Kind(), member, k, x.String(), x.Canonical(), x.Len()))
		return true
	})
	return out
}

// requireSameTree checks that two Values hold the same values in the
// same order, with the same keys and texts.
func requireSameTree(t testing.TB, want, got canon.Value) {
	t.Helper()
	require.Equal(t, flatten(want), flatten(got))
	require.True(t, want.Equal(got))
}

// TestParseIsParseValueOfCanonical: Parse reorders members as it reads
// them, in one pass; the tree it builds from any spelling, members in any
// order, is the one ParseValue reads from the canonical text, value for
// value, and the values' accessors agree with encoding/json.
func TestParseIsParseValueOfCanonical(t *testing.T) {
	reordered := 0
	for seed := range uint64(500) {
		g := newGen(seed)
		noisy := g.value(5, 6).noisy(g.r)
		c, err := canon.Canonicalize(noisy)
		require.NoError(t, err)
		want, err := canon.ParseValue(c)
		require.NoError(t, err)
		got, err := canon.Parse(noisy)
		require.NoError(t, err, "seed %d", seed)
		requireSameTree(t, want, got)
		sameAsJSON(t, got, decodeJSON(t, c), "")
		if _, err := canon.ParseValue(noisy); errors.Is(err, canon.ErrNotCanonical) {
			reordered++
		}
	}
	assert.Greater(t, reordered, 300, "the generator spells most documents non-canonically")
	for _, in := range []string{
		`{"b":{"d":[1,{"z":"\u00e9","y":"\n"}],"c":"x"},"a":[{"q":1,"p":{"s":2,"r":3}}],"\u0061a":null}`,
		`{"\ud83d\ude02":1,"\uE000":2,"é":"\"","e":true}`,
		`[{"b":1,"a":2},{"d":3,"c":{"f":4,"e":5}}]`,
	} {
		c, err := canon.Canonicalize([]byte(in))
		require.NoError(t, err, in)
		want, err := canon.ParseValue(c)
		require.NoError(t, err)
		got, err := canon.Parse([]byte(in))
		require.NoError(t, err)
		requireSameTree(t, want, got)
	}
}

// TestParseValueRefusesNonCanonical: a noisy spelling of a document is
// refused unless it happens to be canonical already, and every refusal of
// Canonicalize is also one of ParseValue.
func TestParseValueRefusesNonCanonical(t *testing.T) {
	refused := 0
	for seed := range uint64(300) {
		g := newGen(seed)
		noisy := g.object(3, 4).noisy(g.r)
		c, err := canon.Canonicalize(noisy)
		require.NoError(t, err)
		_, err = canon.ParseValue(noisy)
		if bytes.Equal(c, noisy) {
			assert.NoError(t, err)
			continue
		}
		assert.ErrorIs(t, err, canon.ErrNotCanonical, "seed %d", seed)
		refused++
	}
	assert.Greater(t, refused, 250, "the generator spells most documents non-canonically")

	for _, tc := range []struct {
		in   string
		want error
	}{
		{`{"b":1,"a":2}`, canon.ErrNotCanonical},
		{`{"a":1.0}`, canon.ErrNotCanonical},
		{`{"a":"\u0041"}`, canon.ErrNotCanonical},
		{` {}`, canon.ErrNotCanonical},
		{`{"a":1,"a":1}`, canon.ErrDuplicateKey},
		{`{"b":1,"a":2,"b":3}`, canon.ErrDuplicateKey},
		{`[9007199254740993]`, canon.ErrNumber},
		{`["\ud800"]`, canon.ErrLoneSurrogate},
		{"[\"\xff\"]", canon.ErrInvalidUTF8},
		{`[1] [2]`, canon.ErrTrailingData},
		{`[1,]`, canon.ErrSyntax},
		{``, canon.ErrSyntax},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), canon.ErrTooDeep},
	} {
		_, err := canon.ParseValue([]byte(tc.in))
		assert.ErrorIs(t, err, tc.want, "%q", tc.in)
	}
	_, err := canon.Limits{MaxBytes: 10}.ParseValue([]byte(`["0123456789"]`))
	assert.ErrorIs(t, err, canon.ErrTooLarge)
}

func TestValueAccessors(t *testing.T) {
	v, err := canon.ParseValue([]byte(`{"":0,"a~b":[true,false,null],"items":[{"amount":19.99},{"amount":1e+21}],"s":"q\"\n\u001f"}`))
	require.NoError(t, err)
	assert.Equal(t, canon.KindObject, v.Kind())
	assert.Equal(t, 4, v.Len())
	_, isMember := v.Key()
	assert.False(t, isMember, "the root is nobody's member")

	empty, ok := v.Get("")
	require.True(t, ok)
	k, isMember := empty.Key()
	assert.True(t, isMember, "the empty key is a key")
	assert.Equal(t, "", k)
	assert.Equal(t, "0", empty.Number())

	s, ok := v.At("/s")
	require.True(t, ok)
	assert.Equal(t, "q\"\n\x1f", s.String())
	assert.Equal(t, `"q\"\n\u001f"`, s.Canonical())
	assert.Equal(t, "", s.Number(), "a string has no number text")

	amt, ok := v.At("/items/1/amount")
	require.True(t, ok)
	assert.Equal(t, "1e+21", amt.Number())
	small, _ := v.At("/items/0/amount")
	c, err := small.Cmp(amt)
	require.NoError(t, err)
	assert.Equal(t, -1, c)
	_, err = s.Cmp(amt)
	assert.ErrorIs(t, err, canon.ErrNotNumber)

	f, ok := v.At("/a~0b/1")
	require.True(t, ok)
	assert.Equal(t, canon.KindBool, f.Kind())
	assert.False(t, f.Bool())
	tr, _ := v.At("/a~0b/0")
	assert.True(t, tr.Bool())
	for _, bad := range []string{"a", "/nope", "/items/01", "/items/2", "/items/-1", "/a~2b", "/s/0", "/items/x"} {
		_, ok := v.At(bad)
		assert.False(t, ok, bad)
	}

	var kinds []string
	v.Walk(func(x canon.Value) bool {
		kinds = append(kinds, x.Kind().String())
		return x.Kind() != canon.KindArray || x.Len() != 3 // skip the literals
	})
	assert.Equal(t, []string{"object", "number", "array", "array", "object", "number", "object", "number", "string"}, kinds)

	var zero canon.Value
	assert.Equal(t, canon.KindInvalid, zero.Kind())
	assert.Equal(t, 0, zero.Len())
	assert.Equal(t, "", zero.String())
	zero.Walk(func(canon.Value) bool { t.Fatal("walked the zero Value"); return true })
	_, err = json.Marshal(zero)
	assert.Error(t, err)
}

// TestValueEqualIsJSONEquality: two Values are Equal exactly when
// encoding/json decodes their texts to equal values, over generated
// documents and every one-place change of them.
func TestValueEqualIsJSONEquality(t *testing.T) {
	for seed := range uint64(40) {
		g := newGen(seed)
		doc := g.object(3, 4)
		c, err := canon.Canonicalize(doc.noisy(g.r))
		require.NoError(t, err)
		v, err := canon.ParseValue(c)
		require.NoError(t, err)
		for _, m := range mutations(doc, g.r) {
			mc, err := canon.Canonicalize(m.plain())
			require.NoError(t, err)
			mv, err := canon.ParseValue(mc)
			require.NoError(t, err)
			assert.False(t, v.Equal(mv), "seed %d: a changed document is not Equal", seed)
		}
		again, err := canon.ParseValue(bytes.Clone(c))
		require.NoError(t, err)
		assert.True(t, v.Equal(again))
	}
}

// TestCompareDecimalIsExact checks CompareDecimal against math/big over
// numbers that agree in their first 16 digits, which float64 cannot tell
// apart, and shows a float64 comparison getting them wrong.
func TestCompareDecimalIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	floatWrong := 0
	for range 5000 {
		a, b := closeDecimals(r)
		want := ratOf(t, a).Cmp(ratOf(t, b))
		got, err := canon.CompareDecimal(a, b)
		require.NoError(t, err)
		require.Equal(t, want, got, "%s vs %s", a, b)
		rev, _ := canon.CompareDecimal(b, a)
		require.Equal(t, -got, rev)
		fa, _ := strconv.ParseFloat(a, 64)
		fb, _ := strconv.ParseFloat(b, 64)
		if cmpFloat(fa, fb) != want {
			floatWrong++
		}
	}
	assert.Greater(t, floatWrong, 1000, "a float64 comparison is wrong on many of these pairs")

	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1", "1.0", 0}, {"-0", "0", 0}, {"0.0e5", "-0.0", 0}, {"1e2", "100", 0}, {"19.99", "20", -1},
		{"500", "500.00000000000000001", -1}, {"-1", "-2", 1}, {"-1e-400", "0", -1}, {"1e400", "1e399", 1},
		{"9007199254740993", "9007199254740992", 1}, {"0.30000000000000001", "0.3", 1},
	} {
		got, err := canon.CompareDecimal(tc.a, tc.b)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s vs %s", tc.a, tc.b)
	}
	for _, bad := range []string{"", "1.", ".5", "+1", "01", "1e", "NaN", "Infinity", "0x10", " 1", "1 ", "1e99999999"} {
		_, err := canon.CompareDecimal(bad, "1")
		assert.ErrorIs(t, err, canon.ErrNotNumber, "%q", bad)
		_, err = canon.CompareDecimal("1", bad)
		assert.ErrorIs(t, err, canon.ErrNotNumber, "%q", bad)
	}
}

// closeDecimals returns two number texts, each spelt in one of several
// forms, whose values share up to 17 leading digits.
func closeDecimals(r *rand.Rand) (string, string) {
	digits := func(n int) string {
		var b strings.Builder
		b.WriteByte(byte('1' + r.IntN(9)))
		for range n - 1 {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		return b.String()
	}
	base := digits(17 + r.IntN(4))
	other := base[:16+r.IntN(len(base)-16)] + digits(1+r.IntN(3))
	exp := r.IntN(40) - 20
	neg := r.IntN(2) == 0
	spell := func(d string) string {
		s := d + "e" + strconv.Itoa(exp)
		if r.IntN(2) == 0 {
			s = "0." + d + "e" + strconv.Itoa(exp+len(d))
		}
		if neg {
			s = "-" + s
		}
		return s
	}
	return spell(base), spell(other)
}

func ratOf(t *testing.T, s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	require.True(t, ok, s)
	return r
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func ExampleParseValue() {
	v, err := canon.ParseValue([]byte(`{"amount":19.99,"to":"finance@example.com"}`))
	if err != nil {
		panic(err)
	}
	amount, _ := v.Get("amount")
	over, _ := canon.CompareDecimal(amount.Number(), "500")
	to, _ := v.At("/to")
	fmt.Println(amount.Number(), over > 0, to.String())
	for k, m := range v.Members() {
		fmt.Println(k, m.Kind())
	}
	_, err = canon.ParseValue([]byte(`{"to":"finance@example.com","amount":19.99}`))
	fmt.Println(err)
	// Output:
	// 19.99 false finance@example.com
	// amount number
	// to string
	// canon: not in canonical form at byte 2
}

func ExampleCompareDecimal() {
	c, _ := canon.CompareDecimal("500.00", "5e2")
	d, _ := canon.CompareDecimal("0.30000000000000001", "0.3")
	fmt.Println(c, d)
	// Output: 0 1
}
