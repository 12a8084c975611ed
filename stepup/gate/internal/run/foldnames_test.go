package run

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// pair returns the JSON object {a: "VALUE-A", b: "VALUE-B"}.
func pair(a, b string) string {
	ka, _ := json.Marshal(a)
	kb, _ := json.Marshal(b)
	return fmt.Sprintf(`{%s:"VALUE-A",%s:"VALUE-B"}`, ka, kb)
}

func folded(t testing.TB, args string) string {
	t.Helper()
	v, err := canon.Parse([]byte(args))
	require.NoError(t, err, args)
	return foldedNames(v)
}

// decodesAsOne reports whether encoding/json gives a member named b to
// the struct field named a: the decoder's own answer, where a is a name
// a struct tag can carry (ok is false otherwise).
func decodesAsOne(a, b string) (one, ok bool) {
	typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[string](),
		Tag: reflect.StructTag(`json:` + strconv.Quote(a))}})
	exact := reflect.New(typ)
	ka, _ := json.Marshal(a)
	if json.Unmarshal([]byte(`{`+string(ka)+`:"x"}`), exact.Interface()) != nil || exact.Elem().Field(0).String() != "x" {
		return false, false // the tag is not a name encoding/json takes
	}
	other := reflect.New(typ)
	kb, _ := json.Marshal(b)
	if json.Unmarshal([]byte(`{`+string(kb)+`:"x"}`), other.Interface()) != nil {
		return false, false
	}
	return other.Elem().Field(0).String() == "x", true
}

// partners returns the runes a decoder may take for r: its simple case
// folding orbit, and its lower and upper case.
func partners(r rune) []rune {
	var out []rune
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, f)
	}
	for _, c := range []rune{unicode.ToLower(r), unicode.ToUpper(r)} {
		if c != r && !strings.ContainsRune(string(out), c) {
			out = append(out, c)
		}
	}
	return out
}

// TestFoldedNamesMatchesTheDecoders: for every rune that has a case
// partner, two names that differ in that rune alone are refused exactly
// when encoding/json reads them as one member (checked with
// encoding/json itself wherever a struct tag can carry the name, with
// strings.EqualFold elsewhere) or strings.ToLower makes them equal, as
// sonic compares them. Turkish dotless ı (U+0131) is no i to either;
// dotted İ (U+0130) is an i to sonic only.
func TestFoldedNamesMatchesTheDecoders(t *testing.T) {
	checked, byDecoder := 0, 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, p := range partners(r) {
			a, b := "pay"+string(r)+"Id", "pay"+string(p)+"Id"
			one, ok := decodesAsOne(a, b)
			if ok {
				byDecoder++
				assert.Equal(t, strings.EqualFold(a, b), one, "encoding/json and EqualFold disagree on %q %q", a, b)
			} else {
				one = strings.EqualFold(a, b)
			}
			la, lb := strings.ToLower(a), strings.ToLower(b) // sonic's folding
			want := one || la == lb
			got := folded(t, pair(a, b)) != ""
			if !assert.Equal(t, want, got, "%q (%U) and %q (%U)", a, r, b, p) {
				return
			}
			checked++
		}
	}
	t.Logf("%d name pairs, %d of them checked against encoding/json", checked, byDecoder)
	require.Greater(t, byDecoder, 1000)

	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"payeeId", "payeeid", true},
		{"s", "\u017f", true}, // ſ
		{"k", "\u212a", true}, // Kelvin sign
		{"K", "\u212a", true},
		{"\u00e5", "\u212b", true}, // å, Ångström sign
		{"\u00df", "\u1e9e", true}, // ß, capital sharp s
		{"id", "\u0130d", true},    // İd: sonic's ToLower makes it "id"
		{"id", "\u0131d", false},   // ıd: neither decoder folds ı to i
		{"I", "\u0131", false},
		{"ss", "\u00df", false},
		{"\u03c3", "\u03c2", true}, // σ, final ς
		{"a-b", "a_b", false},
		{"ab", "a b", false},
	} {
		assert.Equal(t, tc.want, folded(t, pair(tc.a, tc.b)) != "", "%q %q", tc.a, tc.b)
	}
}

// caseVariants returns every spelling of s with its ASCII letters in
// either case.
func caseVariants(s string) []string {
	out := []string{""}
	for _, c := range s {
		var next []string
		for _, p := range out {
			next = append(next, p+string(c))
			if u := unicode.ToUpper(c); c < utf8.RuneSelf && u != c {
				next = append(next, p+string(u))
			} else if l := unicode.ToLower(c); c < utf8.RuneSelf && l != c {
				next = append(next, p+string(l))
			}
		}
		out = next
	}
	return out
}

// nest puts object inside depth containers, the kinds of which shape
// picks, and returns the arguments with the JSON pointer of the object.
func nest(object string, depth int, shape []string) (args, pointer string) {
	args = object
	var tokens []string
	for i := depth - 1; i >= 0; i-- {
		switch shape[i%len(shape)] {
		case "member":
			args = `{"a/b~c":1,"in~side/x":` + args + `}`
			tokens = append([]string{"in~0side~1x"}, tokens...)
		case "element":
			args = `[1,` + args + `]`
			tokens = append([]string{"1"}, tokens...)
		case "objects": // an array of objects, the one at index 2
			args = `[{"n":1},{"n":2},` + args + `]`
			tokens = append([]string{"2"}, tokens...)
		}
	}
	if depth > 0 && shape[0] != "member" {
		args = `{"items":` + args + `}` // the arguments are an object
		tokens = append([]string{"items"}, tokens...)
	}
	if len(tokens) == 0 {
		return args, ""
	}
	return args, "/" + strings.Join(tokens, "/")
}

// TestFoldedNamesAtAnyDepth: every ASCII case variant of a name, and the
// non-ASCII letters decoders take for ASCII ones, beside the name, is
// refused at depths 1 to 5, in objects, arrays and arrays of objects; the
// reason names the object's JSON pointer and never a value. Names that
// only look alike are not refused.
func TestFoldedNamesAtAnyDepth(t *testing.T) {
	var colliding [][2]string
	for _, v := range caseVariants("payeeId") {
		if v != "payeeId" {
			colliding = append(colliding, [2]string{"payeeId", v})
		}
	}
	colliding = append(colliding,
		[2]string{"status", "\u017ftatus"}, [2]string{"sta\u017f", "STAS"},
		[2]string{"kind", "\u212aind"}, [2]string{"ok", "O\u212a"},
		[2]string{"id", "\u0130d"})
	distinct := [][2]string{{"id", "\u0131d"}, {"payeeId", "payee_id"}, {"payeeId", "payeeId2"}, {"to", "t\u043e"}}
	shapes := [][]string{{"member"}, {"element"}, {"objects"}, {"member", "objects"}, {"objects", "element", "member"}}

	for depth := 0; depth <= 5; depth++ {
		for _, shape := range shapes {
			if depth == 0 && len(shape) > 1 {
				continue
			}
			for _, names := range colliding {
				obj := strings.TrimSuffix(pair(names[0], names[1]), "}") + `,"other":{"x":[1]}}`
				args, ptr := nest(obj, depth, shape)
				why := folded(t, args)
				require.NotEmpty(t, why, "%s", args)
				if ptr == "" {
					assert.Contains(t, why, "the arguments object itself", args)
				} else {
					assert.Contains(t, why, strconv.Quote(ptr), args)
				}
				assert.NotContains(t, why, "VALUE", "the reason carries no value")
			}
			for _, names := range distinct {
				args, _ := nest(pair(names[0], names[1]), depth, shape)
				assert.Empty(t, folded(t, args), "%s", args)
			}
		}
	}
}

// TestFoldedNamesReasonIsBounded: a pointer made of long names is cut,
// and the reason stays one line of valid UTF-8.
func TestFoldedNamesReasonIsBounded(t *testing.T) {
	long := strings.Repeat("é\n", 400)
	args := `{"` + strings.ReplaceAll(long, "\n", `\n`) + `":` + pair("a", "A") + `}`
	why := folded(t, args)
	require.NotEmpty(t, why)
	assert.Less(t, len(why), 2*maxPointer+200)
	assert.True(t, utf8.ValidString(why))
	assert.NotContains(t, why, "\n")
}

// bruteFolded is foldedNames' property by every pair of names of every
// object: quadratic, and plain.
func bruteFolded(v canon.Value) bool {
	hit := false
	v.Walk(func(x canon.Value) bool {
		var names []string
		for k := range x.Members() {
			names = append(names, k)
		}
		for i := range names {
			for j := i + 1; j < len(names); j++ {
				li, lj := strings.ToLower(names[i]), strings.ToLower(names[j]) // sonic's folding
				if strings.EqualFold(names[i], names[j]) || li == lj {
					hit = true
				}
			}
		}
		return !hit
	})
	return hit
}

// FuzzFoldedNames: for any arguments canon parses, foldedNames refuses
// exactly those a pairwise comparison of every object's names refuses,
// and its reason is valid UTF-8 on one line.
func FuzzFoldedNames(f *testing.F) {
	for _, s := range []string{pair("a", "A"), `{"a":[{"b":1,"B":2}]}`, `{"x":{"ſ":1,"s":2}}`, `{"id":1,"ıd":2}`,
		`{"a":{"b":{"c":{"K":1,"k":2}}}}`, `[{"İ":1,"i":2}]`, `{}`, `{"a/~b":{"Q":1,"q":2}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := canon.Parse([]byte(s))
		if err != nil {
			return
		}
		why := foldedNames(v)
		if (why != "") != bruteFolded(v) {
			t.Fatalf("%q: foldedNames says %q", s, why)
		}
		if !utf8.ValidString(why) || strings.ContainsAny(why, "\n\r") {
			t.Fatalf("reason %q", why)
		}
	})
}

// BenchmarkFoldedNames measures the check on arguments of many small
// objects and on one object of many names.
func BenchmarkFoldedNames(b *testing.B) {
	var many, wide strings.Builder
	many.WriteString(`{"items":[`)
	wide.WriteString(`{`)
	for i := range 2000 {
		if i > 0 {
			many.WriteString(",")
			wide.WriteString(",")
		}
		fmt.Fprintf(&many, `{"sku":"A-%d","qty":%d,"Note":"x"}`, i, i)
		fmt.Fprintf(&wide, `"name%dé":%d`, i, i)
	}
	many.WriteString(`]}`)
	wide.WriteString(`}`)
	for name, args := range map[string]string{"many objects": many.String(), "wide object": wide.String()} {
		v, err := canon.Parse([]byte(args))
		require.NoError(b, err)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if foldedNames(v) != "" {
					b.Fatal("refused")
				}
			}
		})
	}
}
