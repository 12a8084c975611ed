package canon_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// numberSpellings generates JSON number texts near the edges of float64:
// long mantissas, 17 and more significant digits, exponents at the
// subnormal and overflow limits, trailing zeros, negative zero, halfway
// cases between neighbouring doubles.
func numberSpellings(n int) []string {
	r := rand.New(rand.NewPCG(17, 19))
	digits := func(k int) string {
		var b strings.Builder
		b.WriteByte(byte('1' + r.IntN(9)))
		for range k - 1 {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		return b.String()
	}
	fixed := []string{"0", "-0", "0.0", "-0.0", "1", "1.0", "1e0", "10e-1", "0.1", "0.30000000000000001", "19.99",
		"9007199254740992", "9007199254740993", "9007199254740993.0", "1e400", "1e-400", "5e-324", "4e-324",
		"2.4703282292062328e-324", "2.4703282292062327e-324", "1.7976931348623157e308", "1.7976931348623158e308",
		"1.7976931348623159e308", "123456789012345678901234567890", "1e21", "1e20", "100000000000000000000",
		"0.000001", "0.0000001", "1E+2", "1e-7", "-1e-7", "2.225073858507201e-308", "2.2250738585072011e-308"}
	out := append([]string(nil), fixed...)
	for range n {
		m := digits(1 + r.IntN(25))
		var s string
		switch r.IntN(4) {
		case 0:
			s = m
		case 1:
			cut := 1 + r.IntN(len(m))
			s = m[:cut] + "." + m[cut:] + strings.Repeat("0", r.IntN(3))
			s = strings.TrimSuffix(s, ".")
		case 2:
			s = m[:1] + "." + m[1:] + "e" + fmt.Sprint(r.IntN(660)-330)
			s = strings.Replace(s, ".e", "e", 1)
		default:
			s = "0." + strings.Repeat("0", r.IntN(10)) + m
		}
		if r.IntN(3) == 0 {
			s = "-" + s
		}
		out = append(out, s)
	}
	return out
}

// TestCanonKeepsEveryNumbersValue: every number canon accepts comes out
// denoting exactly the decimal its input text denotes (the only exception
// being -0, whose canonical form "0" denotes the same number); a number it
// cannot keep is refused, never rounded.
func TestCanonKeepsEveryNumbersValue(t *testing.T) {
	accepted := 0
	for _, s := range numberSpellings(20000) {
		out, err := canon.Canonicalize([]byte(`{"n":` + s + `}`))
		if err != nil {
			continue
		}
		accepted++
		var v struct{ N json.Number }
		require.NoError(t, json.Unmarshal(out, &v))
		in, ok := new(big.Rat).SetString(s)
		require.True(t, ok, s)
		got, ok := new(big.Rat).SetString(v.N.String())
		require.True(t, ok, v.N.String())
		assert.Zero(t, in.Cmp(got), "%s became %s", s, v.N)
	}
	assert.Greater(t, accepted, 5000)
}

// TestNumberSpellingsCatchNaive: a canonicalizer that goes through float64
// and prints the shortest form (as many do) changes the value of many of
// the generated numbers, so the test above could fail.
func TestNumberSpellingsCatchNaive(t *testing.T) {
	changed := 0
	for _, s := range numberSpellings(2000) {
		var f float64
		if json.Unmarshal([]byte(s), &f) != nil {
			continue
		}
		b, err := json.Marshal(f)
		if err != nil {
			continue
		}
		in, _ := new(big.Rat).SetString(s)
		got, ok := new(big.Rat).SetString(string(b))
		if ok && in.Cmp(got) != 0 {
			changed++
		}
	}
	assert.Greater(t, changed, 500)
}
