package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every string the text output takes from a file (a receipt's tool and
// approver, an audit record's class or approver, a reason that may name
// them, a file name) goes through quoted or printable: a receipt's approver
// user is not signed, so anyone holding a receipt can rename its approver to
// text that, printed raw, moves the cursor, clears the line and writes a
// verdict of its own (ESC sequences, CR, LF, C1 controls), or reorders what
// follows it on screen (the bidirectional controls U+202A-U+202E and
// U+2066-U+2069). The JSON output is escaped by encoding/json.

// quoted returns s as a Go string literal: in quotes, so a value can be
// told from the sentence around it, and with every character that does not
// print as itself escaped.
func quoted(s string) string { return strconv.Quote(s) }

// printable returns s with every character that does not print as itself
// escaped as in a Go string literal (\x1b, \n, \u202e, \x85), and
// backslashes doubled, so that the escapes are unambiguous: a line of
// output stays one line and reads as what it holds. Other text, printable
// non-ASCII included, is left as it is.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == '\\' || r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}
