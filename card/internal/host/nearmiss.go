package host

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// rootName splits a host name into the name looked up and the dots at
// its end: one dot names the DNS root and changes nothing, so
// "example.com." is example.com; more are empty labels. A dot is any of
// the characters IDNA maps to one.
func rootName(h string) (name, tail string) {
	name = h
	for name != "" {
		r, size := utf8.DecodeLastRuneInString(name)
		if !strings.ContainsRune(dots, r) {
			break
		}
		name = name[:len(name)-size]
		tail += "."
	}
	return name, tail
}

// nearMiss reports two skeletons one character apart, a reader's
// near-miss: one character substituted, inserted, deleted, or two
// neighbours swapped ("exampie", "exmaple", "exampe"), or the same once
// their diacritics are dropped ("examplė", "ëxämple"). Skeletons are NFD,
// so a diacritic is a combining mark of its own, and a single one is an
// insertion.
func nearMiss(a, b string) bool {
	if a == b {
		return false
	}
	sa, sb := stripMarks(a), stripMarks(b)
	return sa == sb || oneEdit(a, b) || oneEdit(sa, sb)
}

// oneEdit reports two different strings one substitution, insertion,
// deletion or swap of neighbours apart.
func oneEdit(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > len(rb) {
		ra, rb = rb, ra
	}
	switch len(rb) - len(ra) {
	case 0:
		diff := -1
		for i := range ra {
			if ra[i] == rb[i] {
				continue
			}
			if diff >= 0 {
				// A second difference: only a swap of neighbours is one slip.
				return i == diff+1 && ra[diff] == rb[i] && ra[i] == rb[diff] && string(ra[i+1:]) == string(rb[i+1:])
			}
			diff = i
		}
		return diff >= 0
	case 1:
		i := 0
		for i < len(ra) && ra[i] == rb[i] {
			i++
		}
		return string(ra[i:]) == string(rb[i+1:])
	}
	return false
}

// foldName is a name as nearMiss compares it besides its skeleton: lower
// case, in NFD, so that "exmaple" is one swap from "example" (their
// skeletons, "exrnaple" and "exarnple", are not).
func foldName(s string) string { return norm.NFD.String(strings.ToLower(s)) }

// stripMarks drops combining marks.
func stripMarks(s string) string {
	if !nonASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// ImitatesTrusted reports a string outside ASCII whose skeleton holds
// the skeleton of a trusted registrable domain's first label while the
// string does not hold the label itself: a look-alike of "paypal" in
// ordinary text, which the card shows with the strict rule.
func (a *Analyzer) ImitatesTrusted(s string) bool {
	if len(a.trusted) == 0 || !nonASCII(s) {
		return false
	}
	skel := ""
	lower := ""
	for _, t := range a.trusted {
		if len(t.label) < 3 {
			continue
		}
		if skel == "" {
			skel = string(appendSkeleton(a.scratch.skel[:0], s, &a.scratch))
			lower = strings.ToLower(s)
		}
		if strings.Contains(skel, t.labelSkel) && !strings.Contains(lower, t.label) {
			return true
		}
	}
	return false
}
