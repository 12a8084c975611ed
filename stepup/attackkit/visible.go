package attackkit

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// lookalike maps characters a reader takes for others to those others: a
// few Cyrillic and Greek letters drawn like Latin ones, and digits drawn
// like letters. It is deliberately small; it only has to catch a card that
// shows such characters raw.
var lookalike = strings.NewReplacer(
	"\u0430", "a", "\u0435", "e", "\u043e", "o", "\u0440", "p", "\u0441", "c", "\u0443", "y",
	"\u0445", "x", "\u0456", "i", "\u0458", "j", "\u0455", "s", "\u0501", "d",
	"\u03bf", "o", "\u03b1", "a", "\u03bd", "v", "\u03c1", "p", "\u03b9", "i", "\u03ba", "k",
	"0", "o", "1", "l", "I", "l", "rn", "m", "vv", "w", "cl", "d",
)

// visibly is how text looks to a reader: compatibility forms folded
// (NFKC), invisible format characters dropped, runs of spaces as one,
// trailing spaces gone, and look-alike characters as what they imitate.
// Two strings a reader cannot tell apart have the same visibly form.
func visibly(s string) string {
	s = norm.NFKC.String(replacementChars(s))
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Cf, r):
			return -1
		case unicode.IsSpace(r) && r != '\n':
			return ' '
		}
		return r
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	// The second pass folds pairs the first one made ("c1" became "cl"):
	// after it only ASCII letters are left, and m, w and d start no pair.
	// Letters put in place of digits may combine with the marks after
	// them, so the result is composed again.
	return norm.NFC.String(lookalike.Replace(lookalike.Replace(strings.Join(lines, "\n"))))
}

// replacementChars returns s with each byte that is not part of valid
// UTF-8 replaced by U+FFFD, as a reader's screen shows it. Done before
// the folding, it keeps an invalid byte from taking the characters after
// it out of the normalization ("\xf5º" folds as "\ufffdº" does, to
// "\ufffdo"), so visibly gives the same form when applied again.
func replacementChars(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError, U+FFFD
	}
	return b.String()
}
