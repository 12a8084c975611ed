package card

import (
	"slices"
	"sort"
	"strings"
	"unicode"
)

// scriptRange is a run of code points of one script. scriptRanges is every
// range of every table in unicode.Scripts, strided ranges expanded, sorted
// and disjoint: a rune's script is one binary search away, with no
// allocation. It is computed once, when the package is initialised, from
// the standard library's immutable tables, and never written afterwards.
type scriptRange struct {
	lo, hi rune
	name   string
}

var scriptRanges = buildScriptRanges()

func buildScriptRanges() []scriptRange {
	var out []scriptRange
	add := func(lo, hi rune, name string) {
		if n := len(out); n > 0 && out[n-1].name == name && out[n-1].hi+1 == lo {
			out[n-1].hi = hi
			return
		}
		out = append(out, scriptRange{lo, hi, name})
	}
	var all []scriptRange
	for name, t := range unicode.Scripts {
		for _, r := range t.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				if r.Stride == 1 {
					all = append(all, scriptRange{rune(r.Lo), rune(r.Hi), name})
					break
				}
				all = append(all, scriptRange{c, c, name})
			}
		}
		for _, r := range t.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				if r.Stride == 1 {
					all = append(all, scriptRange{rune(r.Lo), rune(r.Hi), name})
					break
				}
				all = append(all, scriptRange{c, c, name})
			}
		}
	}
	slices.SortFunc(all, func(a, b scriptRange) int { return int(a.lo - b.lo) })
	for _, r := range all {
		add(r.lo, r.hi, r.name)
	}
	return out
}

// scriptName returns the Unicode script property of r ("Common",
// "Inherited", "Latin", ...), or "Unknown".
func scriptName(r rune) string {
	i := sort.Search(len(scriptRanges), func(i int) bool { return scriptRanges[i].hi >= r })
	if i < len(scriptRanges) && scriptRanges[i].lo <= r {
		return scriptRanges[i].name
	}
	return "Unknown"
}

// scriptOf returns the Unicode script of r, or "" for characters shared by
// all scripts (digits, punctuation, combining marks inherited from their
// base).
func scriptOf(r rune) string {
	if r < 0x80 {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	switch s := scriptName(r); s {
	case "Common", "Inherited":
		return ""
	default:
		return s
	}
}

// scriptSet is the sorted set of scripts of a word or label.
type scriptSet []string

func (s *scriptSet) add(name string) {
	if name == "" {
		return
	}
	i, found := slices.BinarySearch(*s, name)
	if !found {
		*s = slices.Insert(*s, i, name)
	}
}

// allowedMix reports whether a word or label's scripts may be shown as they
// are: one script, or Latin with the scripts of Japanese, Chinese or Korean
// writing (the "highly restrictive" level of UTS #39).
func (s scriptSet) allowedMix() bool {
	if len(s) <= 1 {
		return true
	}
	for _, combo := range [...][]string{
		{"Han", "Hiragana", "Katakana", "Latin"},
		{"Bopomofo", "Han", "Latin"},
		{"Han", "Hangul", "Latin"},
	} {
		if subset(s, combo) {
			return true
		}
	}
	return false
}

func subset(s, of []string) bool {
	for _, x := range s {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}

func (s scriptSet) String() string { return strings.Join(s, "+") }

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}
