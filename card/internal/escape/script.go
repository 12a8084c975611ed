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

// Add adds the script name to s; "" (no script of its own) adds nothing.
func (s *ScriptSet) Add(name string) { *s = s.With(name) }

// With returns s with the script name added. Unlike Add it leaves s's
// room where it was: a set held on the stack stays there.
func (s ScriptSet) With(name string) ScriptSet {
	if name == "" {
		return s
	}
	for _, x := range s {
		if x == name {
			return s // names come from one table: equal ones compare at once
		}
	}
	i, found := slices.BinarySearch(s, name)
	if !found {
		s = slices.Insert(s, i, name)
	}
	return s
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
