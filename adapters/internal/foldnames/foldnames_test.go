package foldnames

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

func object(a, b string) string {
	ka, _ := json.Marshal(a)
	kb, _ := json.Marshal(b)
	return fmt.Sprintf(`{%s:1,%s:2}`, ka, kb)
}

// TestCheckFoldsAsTheDecoders: for every rune with a case partner (its
// simple case folding orbit, its lower and upper case), two names that
// differ in that rune alone are refused exactly when strings.EqualFold
// (encoding/json's matching) or strings.ToLower (sonic's) makes them
// equal; at depths 0 to 5, in objects and arrays.
func TestCheckFoldsAsTheDecoders(t *testing.T) {
	pairs := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		var partners []rune
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			partners = append(partners, f)
		}
		partners = append(partners, unicode.ToLower(r), unicode.ToUpper(r))
		for _, p := range partners {
			if p == r {
				continue
			}
			a, b := "pay"+string(r)+"Id", "pay"+string(p)+"Id"
			la, lb := strings.ToLower(a), strings.ToLower(b) // sonic's folding
			want := strings.EqualFold(a, b) || la == lb
			args := object(a, b)
			for depth := range 6 {
				if depth%2 == 1 {
					args = `[0,` + args + `]`
				} else if depth > 0 {
					args = `{"x":` + args + `}`
				}
				if !assert.Equal(t, want, Check([]byte(args)) != nil, "%U %U depth %d", r, p, depth) {
					return
				}
			}
			pairs++
		}
	}
	require.Greater(t, pairs, 2000)
	assert.NoError(t, Check([]byte(object("id", "\u0131d"))), "ı is no i to either decoder")
	assert.ErrorIs(t, Check([]byte(object("id", "\u0130d"))), ErrFolded, "İ is an i to sonic")
	assert.Error(t, Check([]byte(`{"a":1,"a":2}`)), "canon refuses duplicates")
}

// FuzzCheck: Check refuses exactly the JSON canon parses in which a
// pairwise comparison of some object's names finds two a decoder takes
// for one.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{object("a", "A"), `[{"ſ":1,"s":2}]`, `{"id":1,"ıd":2}`, `{"x":{"İ":1,"i":2}}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := canon.Parse([]byte(s))
		if err != nil {
			return
		}
		want := false
		v.Walk(func(x canon.Value) bool {
			var names []string
			for k := range x.Members() {
				names = append(names, k)
			}
			for i := range names {
				for j := range i {
					li, lj := strings.ToLower(names[i]), strings.ToLower(names[j]) // sonic's folding
					want = want || strings.EqualFold(names[i], names[j]) || li == lj
				}
			}
			return true
		})
		if got := Check([]byte(s)) != nil; got != want {
			t.Fatalf("%q: refused %v, want %v", s, got, want)
		}
	})
}
