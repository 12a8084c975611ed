// Package charclass answers, for any code point, every property the card
// renderer decides on, with one binary search over a generated table:
// whether it is invisible, a control, a space, unassigned, a mark, drawn
// like another character (UTS #39), canonically or compatibly equal to
// something else, right-to-left, and its script. The table is generated
// from Compute (see gen) so rendering does no per-character work beyond
// one lookup, and a test checks it against Compute for every code point.
package charclass

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/confusable"
)

//go:generate go run ./gen -o table.go

// Props is a set of properties of one code point.
type Props uint16

// The properties.
const (
	Control    Props = 1 << iota // C0 or C1 control
	Bidi                         // explicit directional formatting character
	Invisible                    // default-ignorable, format, separator or blank
	Space                        // a space other than U+0020
	Private                      // private use, surrogate, unassigned or not graphic
	Mark                         // combining mark (Mn, Me, Mc)
	Drawing                      // box drawing or block element
	NotNFC                       // not in NFC on its own (canonical singleton)
	Compat                       // not in NFKC on its own (compatibility character)
	Lookalike                    // a non-ASCII part of its decomposition is in the confusables data
	RTL                          // right-to-left letter
	Combines                     // NFC may combine it with the character before
	Letterlike                   // letter, mark or digit: part of a word
)

// Info is what the table holds for a code point.
type Info struct {
	Props  Props
	Script string // Unicode script property: "Latin", "Common", "Inherited", ... or "Unknown"
}

// span is a run of code points from lo up to the next span's lo with the
// same properties and script.
type span struct {
	lo     rune
	props  Props
	script uint8 // index into scripts
}

// Lookup returns the properties of r from the generated table: a binary
// search over the spans, in the Basic Multilingual Plane over those of
// r's block of 64 code points only.
func Lookup(r rune) Info {
	if r < 0 {
		return Info{Script: "Unknown"}
	}
	lo, hi := 0, len(spans) // the span holding r is in [lo, hi)
	if r < 0x10000 {
		lo, hi = int(blocks[r>>6]), int(blocks[r>>6+1])+1
	}
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if spans[m].lo <= r {
			lo = m
		} else {
			hi = m
		}
	}
	return Info{Props: spans[lo].props, Script: scripts[spans[lo].script]}
}

// Compute derives the properties of r from the Unicode tables of the Go
// toolchain, golang.org/x/text and the confusables data. The generator
// calls it for every code point.
func Compute(r rune) Info {
	var p Props
	switch {
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		p |= Control
	}
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		p |= Bidi
	}
	if r == 0x2800 || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 ||
		unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector, unicode.Cf, unicode.Zl, unicode.Zp) {
		p |= Invisible
	}
	if unicode.Is(unicode.Zs, r) && r != ' ' {
		p |= Space
	}
	if unicode.In(r, unicode.Co, unicode.Cs) || !unicode.IsGraphic(r) && p&(Control|Bidi|Invisible) == 0 {
		p |= Private
	}
	if unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) {
		p |= Mark
	}
	if r >= 0x2500 && r <= 0x259f {
		p |= Drawing
	}
	if r >= 0xd800 && r <= 0xdfff {
		return Info{Props: p | Private, Script: "Unknown"}
	}
	var buf [utf8.UTFMax]byte
	b := buf[:utf8.EncodeRune(buf[:], r)]
	if !norm.NFC.IsNormal(b) {
		p |= NotNFC
	}
	if !norm.NFKC.IsNormal(b) {
		p |= Compat
	}
	if !norm.NFC.Properties(b).BoundaryBefore() {
		p |= Combines
	}
	if r >= 0x80 {
		d := norm.NFD.Properties(b).Decomposition()
		if d == nil {
			d = b
		}
		for _, q := range string(d) {
			if q >= 0x80 && confusable.Listed(q) {
				p |= Lookalike
			}
		}
	}
	if r >= 0x0590 {
		if bp, _ := bidi.LookupRune(r); bp.Class() == bidi.R || bp.Class() == bidi.AL {
			p |= RTL
		}
	}
	if unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) {
		p |= Letterlike
	}
	script := "Unknown"
	for name, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			script = name
			break
		}
	}
	return Info{Props: p, Script: script}
}

// Each calls f for every code point whose properties include one of
// want, in order, from the generated table.
func Each(want Props, f func(r rune, info Info)) {
	for i, sp := range spans {
		if sp.props&want == 0 {
			continue
		}
		hi := rune(0x10ffff)
		if i+1 < len(spans) {
			hi = spans[i+1].lo - 1
		}
		info := Info{Props: sp.props, Script: scripts[sp.script]}
		for r := sp.lo; r <= hi; r++ {
			f(r, info)
		}
	}
}
