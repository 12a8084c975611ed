// Package freetext keeps the free text people give with a decision (the
// reason of a denial, a revocation, a cancellation, and who acts) in the
// one form the gate and the passkey package store it in.
package freetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxReason bounds, in bytes, the text a person (or an agent) gives as
// the reason of a denial, a revocation or a cancellation, as kept in the
// ticket and its audit row.
const MaxReason = 512

// Reason returns free text s as a reason is kept: valid UTF-8 (a bad
// byte becomes U+FFFD), on one line of visible text (control and format
// characters, bidi controls among them, become spaces), trimmed, and cut
// to at most MaxReason bytes at a character boundary. The text is the
// person's words about a decision, never a condition of it: whatever
// they typed, the decision is made.
func Reason(s string) string {
	if len(s) > 4*MaxReason {
		s = s[:4*MaxReason] // what is cut below anyway, before the copy
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) <= MaxReason {
		return s
	}
	cut := MaxReason
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut])
}
