package card

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

// Flags a displayed string can carry. Each names something a reader could
// not see in the characters themselves; the views spell them out.
const (
	flagControl       = "control"        // control characters, shown escaped
	flagInvisible     = "invisible"      // zero-width, format or other default-ignorable code points, shown escaped
	flagBidi          = "bidi"           // bidirectional overrides, embeddings or isolates, shown escaped
	flagSpace         = "unusual-space"  // spaces other than U+0020, shown escaped
	flagNotNFC        = "not-nfc"        // decomposed or unnormalized text; combining marks shown escaped
	flagCompat        = "compatibility"  // compatibility characters (ligatures, full-width forms)
	flagMixedScript   = "mixed-script"   // a word mixing scripts; look-alike letters shown escaped
	flagWholeScript   = "lookalike-word" // a word made only of letters that imitate Latin ones, shown escaped
	flagLeadingSpace  = "leading-space"  // starts with white space
	flagTrailingSpace = "trailing-space" // ends with white space
	flagPrivate       = "private-use"    // private-use or unassigned code points, shown escaped
	flagEmpty         = "empty"          // the empty string
	flagRTL           = "rtl"            // right-to-left letters: display order differs from stored order
)

// flagText is what the views say for each flag.
func flagText(f string) string {
	switch f {
	case flagControl:
		return "contains control characters (shown escaped)"
	case flagInvisible:
		return "contains invisible characters (shown escaped)"
	case flagBidi:
		return "contains text-direction controls (shown escaped)"
	case flagSpace:
		return "contains unusual spaces (shown escaped)"
	case flagNotNFC:
		return "not in normalized (NFC) form: combining marks shown escaped"
	case flagCompat:
		return "contains compatibility characters (ligatures or full-width forms)"
	case flagMixedScript:
		return "mixes scripts in one word: look-alike letters shown escaped"
	case flagWholeScript:
		return "has a word of non-Latin letters that look Latin (shown escaped)"
	case flagLeadingSpace:
		return "starts with white space"
	case flagTrailingSpace:
		return "ends with white space"
	case flagPrivate:
		return "contains private-use or unassigned characters (shown escaped)"
	case flagEmpty:
		return "empty string"
	case flagRTL:
		return "contains right-to-left text: characters are displayed in a different order than stored"
	}
	return f
}

// escaper turns a string into text whose every character is plainly
// visible. The encoding is injective: a backslash always starts an escape
// (\\, \", \n, \r, \t or \u{HEX}), so the original string can be read back
// from the display whatever the escaper chose to escape.
type escaper struct {
	keepNewlines bool // for multi-line agent text: \n stays a line break
	quote        bool // escape '"' (inside a quoted value)
}

// shown is a string prepared for display: escaped text and what was found.
type shown struct {
	Text  string   `json:"text"`
	Flags []string `json:"flags,omitempty"`
}

// plainASCII reports whether s needs no escaping and raises no flag beyond
// the edge-space ones: printable ASCII without backslash or quote.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}

func (e escaper) show(s string) shown {
	var flags flagSet
	switch {
	case s == "":
		flags.add(flagEmpty)
	default:
		first, _ := utf8.DecodeRuneInString(s)
		last, _ := utf8.DecodeLastRuneInString(s)
		if unicode.IsSpace(first) {
			flags.add(flagLeadingSpace)
		}
		if unicode.IsSpace(last) {
			flags.add(flagTrailingSpace)
		}
	}
	if plainASCII(s) {
		return shown{Text: s, Flags: flags.list()}
	}
	nfc := norm.NFC.IsNormalString(s)
	if !nfc {
		flags.add(flagNotNFC)
	}
	suspect := suspectLetters(s, &flags)
	var b strings.Builder
	b.Grow(len(s) + 8)
	var literal []byte // non-ASCII characters shown as themselves
	i := 0
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"' && e.quote:
			b.WriteString(`\"`)
		case r == '\n' && e.keepNewlines:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
			flags.add(flagControl)
		case r == '\r':
			b.WriteString(`\r`)
			flags.add(flagControl)
		case r == '\t':
			b.WriteString(`\t`)
			flags.add(flagControl)
		case r == utf8.RuneError:
			// canon refuses invalid UTF-8, so this is a real U+FFFD.
			writeEscape(&b, r)
		default:
			if f := hiddenKind(r, nfc); f != "" {
				flags.add(f)
				writeEscape(&b, r)
			} else if suspect != nil && suspect[i] {
				writeEscape(&b, r)
			} else {
				if isRTL(r) {
					flags.add(flagRTL)
				}
				if r >= 0x80 {
					literal = utf8.AppendRune(literal, r)
				}
				b.WriteRune(r)
			}
		}
		i++
	}
	if len(literal) > 0 && !norm.NFKC.IsNormal(literal) {
		flags.add(flagCompat)
	}
	return shown{Text: b.String(), Flags: flags.list()}
}

func writeEscape(b *strings.Builder, r rune) {
	b.WriteString(`\u{`)
	h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	for n := len(h); n < 4; n++ {
		b.WriteByte('0')
	}
	b.WriteString(h)
	b.WriteByte('}')
}

// hiddenKind returns the flag for a code point that must be shown escaped
// because a reader could not see it, or could not tell it from another one;
// "" for a code point shown as itself.
func hiddenKind(r rune, nfc bool) string {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return flagControl
	case r == ' ':
		return ""
	case isBidiControl(r):
		return flagBidi
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r),
		unicode.Is(unicode.Cf, r),
		unicode.In(r, unicode.Zl, unicode.Zp):
		return flagInvisible
	case unicode.Is(unicode.Zs, r):
		return flagSpace
	case unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), !unicode.IsGraphic(r):
		return flagPrivate
	case !nfc && unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc):
		return flagNotNFC
	case unicode.Is(unicode.Mn, r) && isInvisibleMark(r):
		return flagInvisible
	}
	return ""
}

// isRTL reports letters of right-to-left scripts, whose presence reorders
// what is displayed around them.
func isRTL(r rune) bool {
	if r < 0x0590 {
		return false
	}
	p, _ := bidi.LookupRune(r)
	return p.Class() == bidi.R || p.Class() == bidi.AL
}

// isBidiControl reports the explicit directional formatting characters of
// UAX #9 (marks, embeddings, overrides, isolates).
func isBidiControl(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// isInvisibleMark reports combining marks that draw nothing on their own
// base (combining grapheme joiner is Default_Ignorable and handled before).
func isInvisibleMark(r rune) bool {
	return r >= 0xe0100 && r <= 0xe01ef // variation selectors supplement
}

// flagSet collects flags in first-seen order without duplicates.
type flagSet struct{ f []string }

func (s *flagSet) add(f string) {
	for _, g := range s.f {
		if g == f {
			return
		}
	}
	s.f = append(s.f, f)
}

func (s *flagSet) list() []string {
	if len(s.f) == 0 {
		return nil
	}
	out := make([]string, len(s.f))
	copy(out, s.f)
	sortFlags(out)
	return out
}

// sortFlags orders flags by their order in flagOrder, so a card's JSON does
// not depend on where in a string a problem first appeared.
func sortFlags(f []string) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && flagRank(f[j]) < flagRank(f[j-1]); j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// flagRank orders flags for display: the most basic surprises first.
func flagRank(f string) int {
	switch f {
	case flagEmpty:
		return 0
	case flagLeadingSpace:
		return 1
	case flagTrailingSpace:
		return 2
	case flagControl:
		return 3
	case flagBidi:
		return 4
	case flagInvisible:
		return 5
	case flagSpace:
		return 6
	case flagPrivate:
		return 7
	case flagNotNFC:
		return 8
	case flagCompat:
		return 9
	case flagMixedScript:
		return 10
	case flagWholeScript:
		return 11
	case flagRTL:
		return 12
	}
	return 13
}
