package card

import (
	"slices"
	"strings"
	"unicode"
)

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
	for _, s := range commonScripts {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) {
		return ""
	}
	for _, name := range allScriptNames() {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	return "Unknown"
}

type namedScript struct {
	name  string
	table *unicode.RangeTable
}

// commonScripts are tried first, in a fixed order, for speed.
var commonScripts = [...]namedScript{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek},
	{"Han", unicode.Han}, {"Hiragana", unicode.Hiragana}, {"Katakana", unicode.Katakana},
	{"Hangul", unicode.Hangul}, {"Arabic", unicode.Arabic}, {"Hebrew", unicode.Hebrew},
	{"Armenian", unicode.Armenian}, {"Devanagari", unicode.Devanagari}, {"Thai", unicode.Thai},
	{"Georgian", unicode.Georgian}, {"Bopomofo", unicode.Bopomofo}, {"Cherokee", unicode.Cherokee},
}

func allScriptNames() []string {
	names := make([]string, 0, len(unicode.Scripts))
	for n := range unicode.Scripts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
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

// suspectLetters finds, by rune index, the letters of s that must be shown
// escaped because they imitate Latin letters: in a word that mixes scripts
// ("p\u0430ypal"), or in a word written wholly in look-alikes of another
// script. It returns nil when there are none.
func suspectLetters(s string, flags *flagSet) []bool {
	ascii := true
	hasLatin := false
	for _, r := range s {
		if r >= 0x80 {
			ascii = false
		}
		if scriptOf(r) == "Latin" {
			hasLatin = true
		}
	}
	if ascii {
		return nil
	}
	runes := []rune(s)
	var suspect []bool
	mark := func(from, to int) {
		if suspect == nil {
			suspect = make([]bool, len(runes))
		}
		for j := from; j < to; j++ {
			if imitatesLatin(runes[j]) {
				suspect[j] = true
			}
		}
	}
	for i := 0; i < len(runes); {
		if !isWordRune(runes[i]) {
			i++
			continue
		}
		j := i
		var scripts scriptSet
		letters, lookalikes := 0, 0
		for j < len(runes) && isWordRune(runes[j]) {
			scripts.add(scriptOf(runes[j]))
			if unicode.IsLetter(runes[j]) {
				letters++
				if imitatesLatin(runes[j]) {
					lookalikes++
				}
			}
			j++
		}
		switch {
		case lookalikes == 0:
		case !scripts.allowedMix():
			flags.add(flagMixedScript)
			mark(i, j)
		case lookalikes == letters && (letters >= 2 || hasLatin) &&
			len(scripts) == 1 && scripts[0] != "Latin":
			flags.add(flagWholeScript)
			mark(i, j)
		}
		i = j
	}
	return suspect
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}
