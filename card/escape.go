package card

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/confusable"
)

// Flags a displayed string can carry. Each names something a reader could
// not see in the characters themselves; the views spell them out.
const (
	flagControl       = "control"         // control characters, shown escaped
	flagLines         = "multi-line"      // line breaks, shown as \n, each ending a displayed line
	flagInvisible     = "invisible"       // zero-width, format, blank or other default-ignorable code points, shown escaped
	flagBidi          = "bidi"            // bidirectional overrides, embeddings or isolates, shown escaped
	flagSpace         = "unusual-space"   // spaces other than U+0020, shown escaped
	flagSpaceRun      = "space-run"       // two or more spaces in a row, shown counted
	flagNotNFC        = "not-nfc"         // decomposed or unnormalized text; combining marks shown escaped
	flagCombining     = "combining"       // combining marks that could hide on their base, shown escaped
	flagCompat        = "compatibility"   // compatibility characters (ligatures, full-width forms), shown escaped
	flagLookalike     = "lookalike-char"  // characters UTS #39 lists as confusable with others, shown escaped
	flagMixedScript   = "mixed-script"    // a word mixing scripts
	flagDrawing       = "drawing"         // box-drawing or block characters, which the card uses for its own lines
	flagLeadingSpace  = "leading-space"   // starts with white space
	flagTrailingSpace = "trailing-space"  // ends with white space
	flagPrivate       = "private-use"     // private-use or unassigned code points, shown escaped
	flagEmpty         = "empty"           // the empty string
	flagRTL           = "rtl"             // right-to-left letters: display order differs from stored order
	flagNotOneHost    = "not-one-address" // mentions hosts but is not exactly one address or URL: no domain is trusted
)

// flagOrder is the display order of flags: the most basic surprises first.
var flagOrder = [...]string{
	flagEmpty, flagLeadingSpace, flagTrailingSpace, flagNotOneHost, flagLines, flagControl, flagBidi,
	flagInvisible, flagSpace, flagSpaceRun, flagPrivate, flagNotNFC, flagCombining, flagCompat,
	flagLookalike, flagMixedScript, flagDrawing, flagRTL,
}

// flagText is what the views say for each flag.
func flagText(f string) string {
	switch f {
	case flagControl:
		return "contains control characters (shown escaped)"
	case flagLines:
		return `has several lines: each line break is shown as \n and ends a displayed line`
	case flagInvisible:
		return "contains invisible characters (shown escaped)"
	case flagBidi:
		return "contains text-direction controls (shown escaped)"
	case flagSpace:
		return "contains unusual spaces (shown escaped)"
	case flagSpaceRun:
		return `contains runs of spaces (shown as \{N spaces})`
	case flagNotNFC:
		return "not in normalized (NFC) form: combining marks and canonical duplicates shown escaped"
	case flagCombining:
		return "contains combining marks that could hide on their letter (shown escaped)"
	case flagCompat:
		return "contains compatibility characters such as ligatures or full-width forms (shown escaped)"
	case flagLookalike:
		return "contains characters that look like other characters (shown escaped)"
	case flagMixedScript:
		return "mixes scripts in one word"
	case flagDrawing:
		return "contains box-drawing or block characters (shown escaped)"
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
	case flagNotOneHost:
		return "is not exactly one address or URL: none of its domains is marked trusted"
	}
	return f
}

// escaper turns a string into text whose every character is plainly
// visible. The encoding is injective: a backslash always starts an escape
// (\\, \", \n, \r, \t, \u{HEX} or \{N spaces}), so the original string can
// be read back from the display whatever the escaper chose to escape.
//
// Which characters are shown as themselves is decided character by
// character, so that the rule is injective under look-alikes by
// construction: a character other than printable ASCII is shown as itself
// only when it is visible, in NFC on its own, not a combining mark that
// could hide on its base, and no part of its canonical decomposition is
// listed in the UTS #39 confusables data. Every character a shown one
// could be mistaken for is therefore escaped, so two strings that look
// alike on the card are equal. (Printable ASCII is shown as itself: the
// card's values are set in a monospace font, where I, l, 1, 0 and O, and rn
// and m, are drawn apart.)
type escaper struct {
	keepNewlines bool // for multi-line agent text: \n stays a bare line break
	quote        bool // escape '"' (inside a quoted value)
}

// shown is a string prepared for display: escaped text and what was found.
type shown struct {
	Text  string   `json:"text"`
	Flags []string `json:"flags,omitempty"`
}

// plainASCII reports whether s needs no escaping and raises no flag beyond
// the edge-space ones: printable ASCII without backslash, quote or two
// spaces in a row.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' || c == ' ' && i > 0 && s[i-1] == ' ' {
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
	mixedScripts(s, &flags)
	var b strings.Builder
	b.Grow(len(s) + 8)
	base := ""       // script of the last base character, for its marks
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"' && e.quote:
			b.WriteString(`\"`)
		case r == '\n' && e.keepNewlines:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
			flags.add(flagLines)
		case r == '\r':
			b.WriteString(`\r`)
			flags.add(flagControl)
		case r == '\t':
			b.WriteString(`\t`)
			flags.add(flagControl)
		case r == ' ':
			n := 1
			for i < len(s) && s[i] == ' ' {
				n++
				i++
			}
			if n == 1 {
				b.WriteByte(' ')
			} else {
				b.WriteString(`\{` + strconv.Itoa(n) + ` spaces}`)
				flags.add(flagSpaceRun)
			}
		case r < 0x80 && r >= 0x20 && r != 0x7f:
			b.WriteByte(byte(r))
		case r == utf8.RuneError:
			// canon refuses invalid UTF-8, so this is a real U+FFFD.
			writeEscape(&b, r)
			flags.add(flagLookalike)
		default:
			if f := hiddenKind(r, nfc, base); f != "" {
				flags.add(f)
				writeEscape(&b, r)
				continue
			}
			if isRTL(r) {
				flags.add(flagRTL)
			}
			if !isMark(r) {
				base = scriptName(r)
			}
			b.WriteRune(r)
		}
		if r < 0x80 {
			base = scriptOf(r)
		}
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

func isMark(r rune) bool { return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) }

// hiddenKind returns the flag for a non-ASCII code point that must be shown
// escaped because a reader could not see it, or could not tell it from
// another one; "" for a code point shown as itself. nfc says whether the
// whole string is in NFC; base is the script of the character a combining
// mark would sit on.
func hiddenKind(r rune, nfc bool, base string) string {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return flagControl
	case isBidiControl(r):
		return flagBidi
	case r == 0x2800, // braille pattern blank: drawn as a space
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r),
		unicode.Is(unicode.Cf, r),
		unicode.In(r, unicode.Zl, unicode.Zp),
		isBlankDefaultIgnorable(r):
		return flagInvisible
	case unicode.Is(unicode.Zs, r):
		return flagSpace
	case unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), !unicode.IsGraphic(r):
		return flagPrivate
	case !nfc && (isMark(r) || combinesBackward(r)):
		// In text that is not in NFC, whatever NFC would combine with
		// the character before it (marks, conjoining jamo) is escaped, so
		// a decomposed spelling never looks like the composed one.
		return flagNotNFC
	case isMark(r):
		// A mark shown as itself must belong to the script of its base
		// (a Devanagari vowel sign on a Devanagari letter); generic marks
		// (script Inherited or Common), marks on another script's letter
		// and marks with no base could hide a difference.
		if s := scriptName(r); s == "Inherited" || s == "Common" || s != base {
			return flagCombining
		}
	case r >= 0x2500 && r <= 0x259f:
		return flagDrawing
	}
	if !singleNFC(r) {
		return flagNotNFC
	}
	if !singleNFKC(r) {
		// Full-width and mathematical letters, ligatures, superscripts:
		// drawn like other characters, some not listed as confusable.
		return flagCompat
	}
	if lookalike(r) {
		return flagLookalike
	}
	return ""
}

// combinesBackward reports whether NFC may combine r with the character
// before it.
func combinesBackward(r rune) bool {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	return !norm.NFC.Properties(buf[:n]).BoundaryBefore()
}

// singleNFKC reports whether r on its own is in NFKC: false for
// compatibility characters such as U+FF54 FULLWIDTH LATIN SMALL LETTER T.
func singleNFKC(r rune) bool {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	return norm.NFKC.IsNormal(buf[:n])
}

// singleNFC reports whether r on its own is in NFC: false for canonical
// singletons such as U+212A KELVIN SIGN, which equals K.
func singleNFC(r rune) bool {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	return norm.NFC.IsNormal(buf[:n])
}

// lookalike reports whether a non-ASCII part of r's canonical decomposition
// is listed in the UTS #39 confusables data.
func lookalike(r rune) bool {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	d := norm.NFD.Properties(buf[:n]).Decomposition()
	if d == nil {
		return confusable.Listed(r)
	}
	for len(d) > 0 {
		p, size := utf8.DecodeRune(d)
		d = d[size:]
		if p >= 0x80 && confusable.Listed(p) {
			return true
		}
	}
	return false
}

// isBlankDefaultIgnorable covers the Hangul fillers, which are
// Default_Ignorable but letters, so no category test catches them.
func isBlankDefaultIgnorable(r rune) bool {
	switch r {
	case 0x115f, 0x1160, 0x3164, 0xffa0:
		return true
	}
	return false
}

// mixedScripts flags words that mix scripts beyond what UTS #39's highly
// restrictive level allows (Latin with the scripts of Chinese, Japanese or
// Korean writing).
func mixedScripts(s string, flags *flagSet) {
	var scripts scriptSet
	inWord := false
	for _, r := range s {
		if !isWordRune(r) {
			if inWord && !scripts.allowedMix() {
				flags.add(flagMixedScript)
				return
			}
			scripts, inWord = scripts[:0], false
			continue
		}
		inWord = true
		scripts.add(scriptOf(r))
	}
	if inWord && !scripts.allowedMix() {
		flags.add(flagMixedScript)
	}
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

// flagSet collects flags without duplicates.
type flagSet struct{ f []string }

func (s *flagSet) add(f string) {
	for _, g := range s.f {
		if g == f {
			return
		}
	}
	s.f = append(s.f, f)
}

// list returns the flags in display order, so a card's JSON does not
// depend on where in a string a problem first appeared.
func (s *flagSet) list() []string {
	if len(s.f) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.f))
	for _, f := range flagOrder {
		for _, g := range s.f {
			if f == g {
				out = append(out, f)
			}
		}
	}
	return out
}
