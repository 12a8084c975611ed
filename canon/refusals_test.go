package canon_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// refusalSentinels are the sentinels a refusal of Canonicalize may wrap.
var refusalSentinels = []error{
	canon.ErrTooLarge, canon.ErrTooDeep, canon.ErrSyntax, canon.ErrTrailingData,
	canon.ErrInvalidUTF8, canon.ErrLoneSurrogate, canon.ErrDuplicateKey,
	canon.ErrNumber, canon.ErrNotObject,
}

// refusal is one input that must be refused with sentinel. at is the
// expected byte offset, or -1 where the table does not pin it.
type refusal struct {
	name     string
	in       string
	sentinel error
	at       int
}

// checkRefusal canonicalizes in under limits and asserts the refusal: a
// *canon.Error wrapping exactly the expected sentinel, at a byte offset
// inside the input.
func checkRefusal(t *testing.T, limits canon.Limits, in []byte, sentinel error, at int) {
	t.Helper()
	out, err := limits.Canonicalize(in)
	require.Error(t, err, "accepted as %q", out)
	assert.Nil(t, out)
	assert.ErrorIs(t, err, sentinel)
	var matched int
	for _, s := range refusalSentinels {
		if errors.Is(err, s) {
			matched++
		}
	}
	assert.Equal(t, 1, matched, "wraps %d sentinels: %v", matched, err)
	ce, ok := errorsAsCanon(err)
	require.True(t, ok, "not a *canon.Error: %T", err)
	assert.GreaterOrEqual(t, ce.Offset, 0)
	assert.LessOrEqual(t, ce.Offset, len(in))
	if at >= 0 {
		assert.Equal(t, at, ce.Offset, "offset")
	}
}

func runRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkRefusal(t, canon.Limits{}, []byte(tc.in), tc.sentinel, tc.at)
		})
	}
}

func TestRefuseTooLarge(t *testing.T) {
	spaces := bytes.Repeat([]byte{' '}, canon.DefaultMaxBytes+1)
	checkRefusal(t, canon.Limits{}, spaces, canon.ErrTooLarge, canon.DefaultMaxBytes)

	// Checked before parsing: bytes that are not even UTF-8 still report the size.
	garbage := bytes.Repeat([]byte{0xff}, canon.DefaultMaxBytes+1)
	checkRefusal(t, canon.Limits{}, garbage, canon.ErrTooLarge, canon.DefaultMaxBytes)

	// Exactly at the limit is accepted.
	atLimit := append([]byte("{}"), bytes.Repeat([]byte{' '}, canon.DefaultMaxBytes-2)...)
	out, err := canon.Canonicalize(atLimit)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(out))

	// A custom limit applies the same way.
	small := canon.Limits{MaxBytes: 8}
	checkRefusal(t, small, []byte(`{"a":123}`), canon.ErrTooLarge, 8)
	out, err = small.Canonicalize([]byte(`{"a":12}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":12}`, string(out))
}

// nest wraps "1" in depth levels, level i opened by opens[i%len(opens)]; it
// returns the text and the offset where level limit+1 opens.
func nest(opens []string, depth, limit int) ([]byte, int) {
	closeOf := map[byte]string{'[': "]", '{': "}"}
	var b, tail strings.Builder
	at := -1
	for i := range depth {
		if i == limit {
			at = b.Len()
		}
		o := opens[i%len(opens)]
		b.WriteString(o)
		tail.WriteString(closeOf[o[0]])
	}
	b.WriteString("1")
	closes := []byte(tail.String())
	slices.Reverse(closes)
	b.Write(closes)
	return []byte(b.String()), at
}

func TestRefuseTooDeep(t *testing.T) {
	shapes := map[string][]string{
		"arrays":  {"["},
		"objects": {`{"k":`},
		"mixed":   {"[", `{"k":`},
	}
	for name, opens := range shapes {
		t.Run(name, func(t *testing.T) {
			ok, _ := nest(opens, canon.DefaultMaxDepth, canon.DefaultMaxDepth)
			out, err := canon.Canonicalize(ok)
			require.NoError(t, err, "%d levels must be accepted", canon.DefaultMaxDepth)
			assert.Equal(t, string(ok), string(out))

			deep, at := nest(opens, canon.DefaultMaxDepth+1, canon.DefaultMaxDepth)
			checkRefusal(t, canon.Limits{}, deep, canon.ErrTooDeep, at)
		})
	}
	// The limit is configurable; scalars inside the deepest level are fine.
	two := canon.Limits{MaxDepth: 2}
	checkRefusal(t, two, []byte(`[{"a":"b","c":[]}]`), canon.ErrTooDeep, 14)
	_, err := two.Canonicalize([]byte(`[{"a":"b","c":1}]`))
	assert.NoError(t, err)

	// An absurd depth is refused without exhausting the stack.
	checkRefusal(t, canon.Limits{}, bytes.Repeat([]byte{'['}, 500000), canon.ErrTooDeep, canon.DefaultMaxDepth)
}

func TestRefuseInvalidUTF8(t *testing.T) {
	runRefusals(t, []refusal{
		{"in string", "{\"a\":\"x\xffy\"}", canon.ErrInvalidUTF8, 7},
		{"in key", "{\"\xfe\":1}", canon.ErrInvalidUTF8, 2},
		{"outside strings", "[1,\xff]", canon.ErrInvalidUTF8, 3},
		{"overlong slash", "[\"\xc0\xaf\"]", canon.ErrInvalidUTF8, 2},
		{"UTF-8 encoded surrogate", "[\"\xed\xa0\x80\"]", canon.ErrInvalidUTF8, 2},
		{"beyond U+10FFFF", "[\"\xf4\x90\x80\x80\"]", canon.ErrInvalidUTF8, 2},
		{"truncated at end", "\"\xe2\x82", canon.ErrInvalidUTF8, 1},
		{"lone continuation", "\"\x80\"", canon.ErrInvalidUTF8, 1},
	})
}

func TestRefuseLoneSurrogate(t *testing.T) {
	runRefusals(t, []refusal{
		{"high alone at end", `["\ud83d"]`, canon.ErrLoneSurrogate, 2},
		{"high then text", `["\ud83dx"]`, canon.ErrLoneSurrogate, 2},
		{"high then short escape", `["\ud83d\n"]`, canon.ErrLoneSurrogate, 2},
		{"low alone", `["\ude02"]`, canon.ErrLoneSurrogate, 2},
		{"low before high", `["\ude02\ud83d"]`, canon.ErrLoneSurrogate, 2},
		{"high then non-low", `["\ud83d\u0041"]`, canon.ErrLoneSurrogate, 2},
		{"high then high", `["\ud83d\ud83d"]`, canon.ErrLoneSurrogate, 2},
		{"in key", `{"a\uDBFF":1}`, canon.ErrLoneSurrogate, 3},
	})
	// A proper pair in either case of hex is fine.
	for _, in := range []string{`"\ud83d\ude02"`, `"\uD83D\uDE02"`} {
		out, err := canon.Canonicalize([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, "\"\U0001F602\"", string(out))
	}
}

func TestRefuseDuplicateKey(t *testing.T) {
	runRefusals(t, []refusal{
		{"plain", `{"a":1,"a":2}`, canon.ErrDuplicateKey, -1},
		{"same value", `{"a":1,"a":1}`, canon.ErrDuplicateKey, -1},
		{"escaped spelling", `{"a":1,"\u0061":2}`, canon.ErrDuplicateKey, -1},
		{"escaped first", `{"\u0061":1,"a":2}`, canon.ErrDuplicateKey, -1},
		{"latin escape", `{"\u00e9":1,"é":2}`, canon.ErrDuplicateKey, -1},
		{"surrogate pair", `{"😂":1,"\ud83d\ude02":2}`, canon.ErrDuplicateKey, -1},
		{"short escape", `{"\n":1,"\u000a":2}`, canon.ErrDuplicateKey, -1},
		{"solidus", `{"/":1,"\/":2}`, canon.ErrDuplicateKey, -1},
		{"unsorted, apart", `{"b":1,"a":2,"c":3,"b":4}`, canon.ErrDuplicateKey, -1},
		{"sorted, adjacent", `{"a":1,"b":2,"b":3}`, canon.ErrDuplicateKey, -1},
		{"nested", `{"x":{"k":1,"k":2}}`, canon.ErrDuplicateKey, -1},
		{"in array", `[{},{"k":1,"\u006b":2}]`, canon.ErrDuplicateKey, -1},
		{"empty key", `{"":1,"":2}`, canon.ErrDuplicateKey, -1},
	})
	// Keys that differ only by case or normalization are different keys.
	for _, in := range []string{`{"a":1,"A":2}`, `{"é":1,"e\u0301":2}`, `{"a":1,"a ":2}`} {
		_, err := canon.Canonicalize([]byte(in))
		assert.NoError(t, err, in)
	}
	// The same key in sibling objects is not a duplicate.
	_, err := canon.Canonicalize([]byte(`{"a":{"k":1},"b":{"k":1}}`))
	assert.NoError(t, err)
}

func TestRefuseNumber(t *testing.T) {
	runRefusals(t, []refusal{
		{"2^53+1", `[9007199254740993]`, canon.ErrNumber, 1},
		{"20 digits", `[12345678901234567890]`, canon.ErrNumber, 1},
		{"0.30000000000000001", `[0.30000000000000001]`, canon.ErrNumber, 1},
		{"overflow", `[1e400]`, canon.ErrNumber, 1},
		{"negative overflow", `[-1e400]`, canon.ErrNumber, 1},
		{"underflow", `[1e-400]`, canon.ErrNumber, 1},
		{"huge exponent", `[1e99999999999999999999]`, canon.ErrNumber, 1},
		{"huge negative exponent", `[1e-99999999999999999999]`, canon.ErrNumber, 1},
		{"precision lost in fraction", `{"amount":100.000000000000001}`, canon.ErrNumber, 10},
		{"top level", `9007199254740993`, canon.ErrNumber, 0},
		{"RFC values.json", `[333333333.33333329]`, canon.ErrNumber, 1},
	})
}

func TestAcceptExactNumbers(t *testing.T) {
	cases := []struct{ in, want string }{
		{"19.99", "19.99"},
		{"0.1", "0.1"},
		{"1.0", "1"},
		{"1e2", "100"},
		{"1E+2", "100"},
		{"100e-2", "1"},
		{"1.5e-07", "1.5e-7"},
		{"-0", "0"},
		{"-0.0e5", "0"},
		{"0e99999999999999999999", "0"},
		{"9007199254740992", "9007199254740992"},
		{"-9007199254740992", "-9007199254740992"},
		{"123456789012345", "123456789012345"},
		{"1e21", "1e+21"},
		{"1e-7", "1e-7"},
		{"0.000001", "0.000001"},
		{"5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"333333333.3333333", "333333333.3333333"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			out, err := canon.Canonicalize([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(out))
		})
	}
}

func TestRefuseTrailingData(t *testing.T) {
	runRefusals(t, []refusal{
		{"second object", `{} {}`, canon.ErrTrailingData, 3},
		{"second number", `1 2`, canon.ErrTrailingData, 2},
		{"letters", `{}x`, canon.ErrTrailingData, 2},
		{"second string", `"a""b"`, canon.ErrTrailingData, 3},
		{"extra bracket", `[]]`, canon.ErrTrailingData, 2},
		{"extra brace", "{}\n}", canon.ErrTrailingData, 3},
		{"NUL", "{}\x00", canon.ErrTrailingData, 2},
		{"comma at top level", `1,2`, canon.ErrTrailingData, 1},
	})
	// Whitespace after the value is not data.
	out, err := canon.Canonicalize([]byte(" {} \t\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "{}", string(out))
}

func TestRefuseSyntax(t *testing.T) {
	var cases []refusal
	for name, in := range map[string]string{
		"empty":                    ``,
		"whitespace only":          " \n\t",
		"open brace":               `{`,
		"open bracket":             `[`,
		"key without value":        `{"a"}`,
		"colon without value":      `{"a":}`,
		"trailing comma in object": `{"a":1,}`,
		"trailing comma in array":  `[1,]`,
		"leading comma":            `[,1]`,
		"double comma":             `[1,,2]`,
		"lone comma object":        `{,}`,
		"unquoted key":             `{a:1}`,
		"single quotes":            `{'a':1}`,
		"number key":               `{1:1}`,
		"missing colon":            `{"a" 1}`,
		"missing comma in object":  `{"a":1 "b":2}`,
		"missing comma in array":   `[1 2]`,
		"unterminated string":      `"abc`,
		"unterminated escape":      `"abc\`,
		"bad escape":               `"\x41"`,
		"short unicode escape":     `"\u12"`,
		"non-hex unicode escape":   `"\u12G4"`,
		"pair with bad low hex":    `"\ud83d\uZZZZ"`,
		"raw tab in string":        "\"a\tb\"",
		"raw newline in string":    "\"a\nb\"",
		"raw NUL in string":        "\"a\x00b\"",
		"leading zero":             `[01]`,
		"minus alone":              `[-]`,
		"plus sign":                `[+1]`,
		"dot without digits":       `[1.]`,
		"leading dot":              `[.5]`,
		"exponent without digits":  `[1e]`,
		"exponent sign only":       `[1e+]`,
		"hex number":               `[0x10]`,
		"NaN":                      `[NaN]`,
		"Infinity":                 `[Infinity]`,
		"truncated literal":        `[tru]`,
		"capitalized literal":      `[True]`,
		"null prefix":              `[nul]`,
		"byte order mark":          "\ufeff{}",
		"comment":                  `/**/{}`,
		"object as key":            `{{}:1}`,
		"colon in array":           `[1:2]`,
		"close before open":        `]`,
		"mismatched close":         `[}`,
		"non-breaking space":       "[\u00a01]",
	} {
		cases = append(cases, refusal{name, in, canon.ErrSyntax, -1})
	}
	runRefusals(t, cases)
}

func TestEffectRefusesNonObjectArgs(t *testing.T) {
	for name, args := range map[string]string{
		"nil":             "",
		"whitespace":      " \n",
		"array":           `[]`,
		"array of object": `[{"to":"x"}]`,
		"string":          `"{}"`,
		"null":            `null`,
		"number":          `1`,
		"true":            `true`,
	} {
		t.Run(name, func(t *testing.T) {
			e := sampleEffect()
			e.Args = json.RawMessage(args)
			_, err := e.Canonical()
			assert.ErrorIs(t, err, canon.ErrNotObject)
			_, err = e.Digest()
			assert.ErrorIs(t, err, canon.ErrNotObject)
		})
	}
	// Args that look like an object but are not valid JSON get the parser's
	// sentinel, not a pass.
	e := sampleEffect()
	e.Args = json.RawMessage(`{"to":`)
	_, err := e.Digest()
	assert.ErrorIs(t, err, canon.ErrSyntax)
	e.Args = json.RawMessage(`{"to":"a","to":"b"}`)
	_, err = e.Digest()
	assert.ErrorIs(t, err, canon.ErrDuplicateKey)
	e.Args = json.RawMessage(`{"amount":12345678901234567890}`)
	_, err = e.Digest()
	assert.ErrorIs(t, err, canon.ErrNumber)
}

// TestErrorsDoNotQuoteInput puts a secret into the input of every kind of
// refusal and checks that the error text never carries it.
func TestErrorsDoNotQuoteInput(t *testing.T) {
	const secret = "hunter2-pw"
	const secretNumber = "98765432109876543219"
	cases := []refusal{
		{"too large", `{"pw":"` + secret + `"}`, canon.ErrTooLarge, -1},
		{"too deep", `[[[[{"pw":"` + secret + `"}]]]]`, canon.ErrTooDeep, -1},
		{"invalid UTF-8", `{"pw":"` + secret + "\xff\"}", canon.ErrInvalidUTF8, -1},
		{"lone surrogate", `{"pw":"` + secret + `\ud800"}`, canon.ErrLoneSurrogate, -1},
		{"duplicate key", `{"` + secret + `":1,"` + secret + `":2}`, canon.ErrDuplicateKey, -1},
		{"number", `{"card":` + secretNumber + `}`, canon.ErrNumber, -1},
		{"trailing data", `{}` + secret, canon.ErrTrailingData, -1},
		{"syntax in literal", `[` + secret + `]`, canon.ErrSyntax, -1},
		{"syntax in escape", `{"pw":"` + secret + `\q"}`, canon.ErrSyntax, -1},
	}
	limits := map[string]canon.Limits{
		"too large": {MaxBytes: 10},
		"too deep":  {MaxDepth: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := limits[tc.name].Canonicalize([]byte(tc.in))
			require.ErrorIs(t, err, tc.sentinel)
			assert.NotContains(t, err.Error(), secret)
			assert.NotContains(t, err.Error(), secretNumber)

			if tc.name == "too large" || tc.name == "too deep" || tc.name == "trailing data" {
				return
			}
			// The same holds when the refusal comes out of an effect.
			e := sampleEffect()
			e.Args = json.RawMessage(`{"x":` + tc.in + `}`)
			_, err = e.Digest()
			require.ErrorIs(t, err, tc.sentinel)
			assert.NotContains(t, err.Error(), secret)
			assert.NotContains(t, err.Error(), secretNumber)
		})
	}
}
