package charclass

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestTableMatchesCompute: the generated table says what Compute says for
// every code point, so it is current with the Unicode tables it was built
// from. After a toolchain or golang.org/x/text update, run go generate.
func TestTableMatchesCompute(t *testing.T) {
	if UnicodeVersion != unicode.Version {
		t.Fatalf("table generated from Unicode %s, toolchain has %s: run go generate ./card/internal/charclass", UnicodeVersion, unicode.Version)
	}
	step := rune(1)
	if testing.Short() || raceEnabled {
		step = 61 // a sample, spread over every plane
	}
	for r := rune(0); r <= utf8.MaxRune; r += step {
		if got, want := Lookup(r), Compute(r); got != want {
			t.Fatalf("%U: table %+v, computed %+v: run go generate ./card/internal/charclass", r, got, want)
		}
	}
}

// TestBlocksIndexSpans: each block's entry names the span holding the
// block's first code point, which is what Lookup's search relies on.
func TestBlocksIndexSpans(t *testing.T) {
	if len(blocks) != 0x10000/64+1 {
		t.Fatalf("%d blocks", len(blocks))
	}
	for k, i := range blocks {
		r := rune(k * 64)
		if spans[i].lo > r || int(i)+1 < len(spans) && spans[i+1].lo <= r {
			t.Fatalf("block %d: span %d does not hold %U", k, i, r)
		}
	}
	for _, r := range []rune{-1, 0, 0xffff, 0x10000, 0x10ffff, 0x110000} {
		_ = Lookup(r) // in range, whatever r
	}
}

func TestLookupExamples(t *testing.T) {
	for _, tc := range []struct {
		r      rune
		props  Props
		script string
	}{
		{'a', Letterlike, "Latin"},
		{'\u0430', Letterlike | Lookalike, "Cyrillic"},
		{'\u200b', Invisible, "Common"},
		{'\u2800', 0, "Braille"},
		{'\u0301', Mark | Combines | Letterlike, "Inherited"},
		{'\u212a', NotNFC | Compat | Letterlike, "Latin"},
		{'\uff54', Compat | Letterlike, "Latin"},
		{'\u258c', Drawing, "Common"},
		{'\u05d0', RTL | Letterlike, "Hebrew"},
		{0xe000, Private, "Unknown"},
	} {
		got := Lookup(tc.r)
		if tc.r == '\u2800' {
			if got.Props&Invisible == 0 {
				t.Errorf("%U: not invisible", tc.r)
			}
			continue
		}
		if got.Props != tc.props || got.Script != tc.script {
			t.Errorf("%U: got %v %s, want %v %s", tc.r, got.Props, got.Script, tc.props, tc.script)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	for b.Loop() {
		for r := rune(0x400); r < 0x500; r++ {
			_ = Lookup(r)
		}
	}
}
