package escape

import (
	"slices"
	"strings"

	"github.com/agentstepup/asu/card/internal/charclass"
)

// scriptName returns the Unicode script property of r ("Common",
// "Inherited", "Latin", ...), or "Unknown", from the generated table.
func scriptName(r rune) string { return charclass.Lookup(r).Script }

// scriptOf returns the Unicode script of r, or "" for characters shared by
// all scripts (digits, punctuation, combining marks inherited from their
// base).
func ScriptOf(r rune) string {
	if r < 0x80 {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	return scriptOfInfo(charclass.Lookup(r))
}

// scriptOfInfo is scriptOf for a code point already looked up.
func scriptOfInfo(info charclass.Info) string {
	switch s := info.Script; s {
	case "Common", "Inherited":
		return ""
	default:
		return s
	}
}

// ScriptSet is the sorted set of scripts of a word or label.
type ScriptSet []string

func (s *ScriptSet) Add(name string) {
	if name == "" {
		return
	}
	i, found := slices.BinarySearch(*s, name)
	if !found {
		*s = slices.Insert(*s, i, name)
	}
}

// AllowedMix reports whether a word or label's scripts may be shown as they
// are: one script, or Latin with the scripts of Japanese, Chinese or Korean
// writing (the "highly restrictive" level of UTS #39).
func (s ScriptSet) AllowedMix() bool {
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

func (s ScriptSet) String() string { return strings.Join(s, "+") }
