package card

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// prototype returns the Latin letters r can be mistaken for, or "" when r
// has no entry. The table is a small subset of the confusables of Unicode
// Technical Standard #39 (section 4): the Cyrillic, Greek, Armenian and
// Latin-extension letters that are drawn like basic Latin ones in common
// fonts, and the ASCII look-alikes that matter in domain names (0/o, 1/l,
// rn/m, vv/w, cl/d). It is enough to catch the look-alikes a person would
// miss on an approval card; it is not the full UTS #39 data.
func prototype(r rune) string {
	switch r {
	// Cyrillic
	case 'а', 'А':
		return "a"
	case 'В':
		return "b"
	case 'е', 'Е':
		return "e"
	case 'ё', 'Ё':
		return "ë"
	case 'о', 'О':
		return "o"
	case 'р', 'Р':
		return "p"
	case 'с', 'С':
		return "c"
	case 'у', 'У', 'ү', 'Ү':
		return "y"
	case 'х', 'Х':
		return "x"
	case 'ѕ', 'Ѕ':
		return "s"
	case 'і', 'І':
		return "i"
	case 'ӏ', 'Ӏ':
		return "l"
	case 'ј', 'Ј':
		return "j"
	case 'ԁ':
		return "cl"
	case 'һ', 'Һ':
		return "h"
	case 'ԛ', 'Ԛ':
		return "q"
	case 'ԝ', 'Ԝ':
		return "vv"
	case 'К':
		return "k"
	case 'М':
		return "rn"
	case 'Н':
		return "h"
	case 'Т':
		return "t"
	// Greek
	case 'α', 'Α':
		return "a"
	case 'Β':
		return "b"
	case 'Ε':
		return "e"
	case 'Ζ':
		return "z"
	case 'Η':
		return "h"
	case 'ι', 'Ι':
		return "i"
	case 'Κ':
		return "k"
	case 'Μ':
		return "rn"
	case 'ν', 'Ν':
		return "v"
	case 'ο', 'Ο':
		return "o"
	case 'ρ', 'Ρ':
		return "p"
	case 'Τ':
		return "t"
	case 'υ', 'Υ':
		return "u"
	case 'χ', 'Χ':
		return "x"
	case 'γ':
		return "y"
	// Armenian
	case 'օ':
		return "o"
	case 'ս':
		return "u"
	case 'ո':
		return "n"
	case 'հ':
		return "h"
	case 'զ':
		return "q"
	case 'ց':
		return "g"
	// Latin extensions and symbols
	case 'ı', 'ɩ':
		return "i"
	case 'ɑ':
		return "a"
	case 'ɡ':
		return "g"
	case 'ℓ', 'ǀ', '|', 'I', '1':
		return "l"
	case '0':
		return "o"
	case 'm':
		return "rn"
	case 'w':
		return "vv"
	case 'd':
		return "cl"
	}
	return ""
}

// skeleton maps s to a form in which look-alike strings coincide, after
// UTS #39: decompose, lower-case, replace each character by its prototype.
// "exarnple.com", "example.com" and "ex\u0430mple.com" share one skeleton.
func skeleton(s string) string {
	s = norm.NFD.String(strings.ToLower(s))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if p := prototype(r); p != "" {
			b.WriteString(p)
		} else if p := prototype(unicode.ToLower(r)); p != "" {
			b.WriteString(p)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// imitatesLatin reports whether r is a non-ASCII letter drawn like a Latin one.
func imitatesLatin(r rune) bool {
	return r >= 0x80 && prototype(r) != ""
}
