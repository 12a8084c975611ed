// Package escape turns strings into the card's display text: every
// character plainly visible, the escaping injective (a backslash always
// starts an escape), and what was found in the string named by flags. It
// also classifies characters by script for the mixed-script rules.
package escape

import (
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/charclass"
)

// Flags a displayed string can carry. Each names something a reader could
// not see in the characters themselves; the views spell them out.
const (
	FlagControl       = "control"         // control characters, shown escaped
	FlagLines         = "multi-line"      // line breaks, shown as \n, each ending a displayed line
	FlagInvisible     = "invisible"       // zero-width, format, blank or other default-ignorable code points, shown escaped
	FlagBidi          = "bidi"            // bidirectional overrides, embeddings or isolates, shown escaped
	FlagSpace         = "unusual-space"   // spaces other than U+0020, shown escaped
	FlagSpaceRun      = "space-run"       // two or more spaces in a row, shown counted
	FlagNotNFC        = "not-nfc"         // decomposed or unnormalized text; combining marks shown escaped
	FlagCombining     = "combining"       // combining marks that could hide on their base, shown escaped
	FlagCompat        = "compatibility"   // compatibility characters (ligatures, full-width forms), shown escaped
	FlagLookalike     = "lookalike-char"  // characters UTS #39 lists as confusable with others, shown escaped
	FlagMixedScript   = "mixed-script"    // a word mixing scripts
	FlagDrawing       = "drawing"         // box-drawing or block characters, which the card uses for its own lines
	FlagLeadingSpace  = "leading-space"   // starts with white space
	FlagTrailingSpace = "trailing-space"  // ends with white space
	FlagPrivate       = "private-use"     // private-use or unassigned code points, shown escaped
	FlagEmpty         = "empty"           // the empty string
	FlagRTL           = "rtl"             // right-to-left letters: display order differs from stored order
	FlagNotOneHost    = "not-one-address" // mentions hosts but is not exactly one address or URL: no domain is trusted
)

// flagOrder is the display order of flags: the most basic surprises first.
var flagOrder = [...]string{
	FlagEmpty, FlagLeadingSpace, FlagTrailingSpace, FlagNotOneHost, FlagLines, FlagControl, FlagBidi,
	FlagInvisible, FlagSpace, FlagSpaceRun, FlagPrivate, FlagNotNFC, FlagCombining, FlagCompat,
	FlagLookalike, FlagMixedScript, FlagDrawing, FlagRTL,
}

// FlagText is what the views say for each flag.
func FlagText(f string) string {
	switch f {
	case FlagControl:
		return "contains control characters (shown escaped)"
	case FlagLines:
		return `has several lines: each line break is shown as \n and ends a displayed line`
	case FlagInvisible:
		return "contains invisible characters (shown escaped)"
	case FlagBidi:
		return "contains text-direction controls (shown escaped)"
	case FlagSpace:
		return "contains unusual spaces (shown escaped)"
	case FlagSpaceRun:
		return `contains runs of spaces (shown as \{N spaces})`
	case FlagNotNFC:
		return "not in normalized (NFC) form: combining marks and canonical duplicates shown escaped"
	case FlagCombining:
		return "contains combining marks that could hide on their letter (shown escaped)"
	case FlagCompat:
		return "contains compatibility characters such as ligatures or full-width forms (shown escaped)"
	case FlagLookalike:
		return "contains characters that look like other characters (shown escaped)"
	case FlagMixedScript:
		return "mixes scripts in one word"
	case FlagDrawing:
		return "contains box-drawing or block characters (shown escaped)"
	case FlagLeadingSpace:
		return "starts with white space"
	case FlagTrailingSpace:
		return "ends with white space"
	case FlagPrivate:
		return "contains private-use or unassigned characters (shown escaped)"
	case FlagEmpty:
		return "empty string"
	case FlagRTL:
		return "contains right-to-left text: characters are displayed in a different order than stored"
	case FlagNotOneHost:
		return "is not exactly one address or URL: none of its domains is marked trusted"
	}
	return f
}

// Escaper turns a string into text whose every character is plainly
// visible. The encoding is injective: a backslash always starts an escape
// (\\, \", \n, \r, \t, \u{HEX} or \{N spaces}), so the original string can
// be read back from the display whatever the Escaper chose to escape.
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
type Escaper struct {
	KeepNewlines bool // for multi-line agent text: \n stays a bare line break
	Quote        bool // escape '"' (inside a quoted value)
	// Prose shows ordinary text as it reads: a word in one script as
	// itself, escaping only what could pass for something else (see
	// prose.go). Without it every character UTS #39 lists as confusable
	// is escaped, the rule for identifiers, keys and hosts.
	Prose bool
}

// Shown is a string prepared for display: escaped text and what was found.
type Shown struct {
	Flags []string `json:"flags,omitempty"`
	Text  string   `json:"text"`
}

// Plain reports whether s is shown as it is, flagged at most for white
// space at its ends: printable ASCII without backslash, quote or two
// spaces in a row.
func Plain(s string) bool { return plainASCII(s) }

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

// Show returns s as displayed, with the flags of what was found in it.
func (e Escaper) Show(s string) Shown {
	var flags flagSet
	switch {
	case s == "":
		flags.add(FlagEmpty)
	default:
		first, _ := utf8.DecodeRuneInString(s)
		last, _ := utf8.DecodeLastRuneInString(s)
		if unicode.IsSpace(first) {
			flags.add(FlagLeadingSpace)
		}
		if unicode.IsSpace(last) {
			flags.add(FlagTrailingSpace)
		}
	}
	if plainASCII(s) {
		return Shown{Text: s, Flags: flags.list()}
	}
	if e.Prose {
		return e.showProse(s, flags)
	}
	// NFC is checked only when a character that NFC could change shows up.
	nfc, nfcKnown := true, false
	// The display is s with some characters replaced by escapes; it is
	// built only from the first escape on, so a string shown as it is
	// costs no copy.
	var b strings.Builder
	copied := 0 // s[:copied] is in b
	escape := func(at, next int) {
		if b.Len() == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[copied:at])
		copied = next
	}
	base := "" // script of the last base character, for its marks
	var wordBuf [4]string
	word := ScriptSet(wordBuf[:0])
	for i := 0; i < len(s); {
		at := i
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r < 0x80 {
			switch {
			case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
				word = word.With("Latin")
				base = "Latin"
				continue
			case r >= '0' && r <= '9':
				base = ""
				continue
			}
			if mixedWord(word) {
				flags.add(FlagMixedScript)
			}
			word, base = word[:0], ""
		}
		switch {
		case r == '\\':
			escape(at, i)
			b.WriteString(`\\`)
		case r == '"' && e.Quote:
			escape(at, i)
			b.WriteString(`\"`)
		case r == '\n' && e.KeepNewlines:
		case r == '\n':
			escape(at, i)
			b.WriteString(`\n`)
			flags.add(FlagLines)
		case r == '\r':
			escape(at, i)
			b.WriteString(`\r`)
			flags.add(FlagControl)
		case r == '\t':
			escape(at, i)
			b.WriteString(`\t`)
			flags.add(FlagControl)
		case r == ' ':
			n := 1
			for i < len(s) && s[i] == ' ' {
				n++
				i++
			}
			if n > 1 {
				escape(at, i)
				b.WriteString(`\{` + strconv.Itoa(n) + ` spaces}`)
				flags.add(FlagSpaceRun)
			}
		case r < 0x80 && r >= 0x20 && r != 0x7f:
		case r == utf8.RuneError:
			// canon refuses invalid UTF-8, so this is a real U+FFFD.
			escape(at, i)
			writeEscape(&b, r)
			flags.add(FlagLookalike)
		default:
			info := charclass.Lookup(r)
			if r >= 0x80 {
				if info.Props&charclass.Letterlike == 0 {
					if mixedWord(word) {
						flags.add(FlagMixedScript)
					}
					word = word[:0]
				} else {
					word = word.With(scriptOfInfo(info))
				}
			}
			if !nfcKnown && info.Props&(charclass.Mark|charclass.Combines|charclass.NotNFC) != 0 {
				nfc, nfcKnown = norm.NFC.IsNormalString(s), true
				if !nfc {
					flags.add(FlagNotNFC)
				}
			}
			if f := hiddenKindOf(info, nfc, base); f != "" {
				flags.add(f)
				escape(at, i)
				writeEscape(&b, r)
				continue
			}
			if info.Props&charclass.RTL != 0 {
				flags.add(FlagRTL)
			}
			if info.Props&charclass.Mark == 0 {
				base = info.Script
			}
		}
	}
	if mixedWord(word) {
		flags.add(FlagMixedScript)
	}
	if copied == 0 && b.Len() == 0 {
		return Shown{Text: s, Flags: flags.list()}
	}
	b.WriteString(s[copied:])
	return Shown{Text: b.String(), Flags: flags.list()}
}

// mixedWord reports a word whose scripts UTS #39's highly restrictive
// level does not allow together.
func mixedWord(word ScriptSet) bool { return len(word) > 1 && !word.AllowedMix() }

// writeEscape writes \u{HEX}, at least four upper-case hex digits.
func writeEscape(b *strings.Builder, r rune) {
	const hex = "0123456789ABCDEF"
	var buf [12]byte
	n := copy(buf[:], `\u{`)
	digits := 4
	for v := uint32(r) >> 16; v != 0; v >>= 4 {
		digits++
	}
	for i := digits - 1; i >= 0; i-- {
		buf[n] = hex[(uint32(r)>>(4*i))&0xf]
		n++
	}
	buf[n] = '}'
	b.Write(buf[:n+1])
}

// hiddenKind returns the flag for a non-ASCII code point that must be shown
// escaped because a reader could not see it, or could not tell it from
// another one; "" for a code point shown as itself. nfc says whether the
// whole string is in NFC; base is the script of the character a combining
// mark would sit on.
func hiddenKind(r rune, nfc bool, base string) string {
	return hiddenKindOf(charclass.Lookup(r), nfc, base)
}

func hiddenKindOf(info charclass.Info, nfc bool, base string) string {
	p := info.Props
	switch {
	case p&charclass.Control != 0:
		return FlagControl
	case p&charclass.Bidi != 0:
		return FlagBidi
	case p&charclass.Invisible != 0:
		return FlagInvisible
	case p&charclass.Space != 0:
		return FlagSpace
	case p&charclass.Private != 0:
		return FlagPrivate
	case !nfc && p&(charclass.Mark|charclass.Combines) != 0:
		// In text that is not in NFC, whatever NFC would combine with
		// the character before it (marks, conjoining jamo) is escaped, so
		// a decomposed spelling never looks like the composed one.
		return FlagNotNFC
	case p&charclass.Mark != 0:
		// A mark shown as itself must belong to the script of its base
		// (a Devanagari vowel sign on a Devanagari letter); generic marks
		// (script Inherited or Common), marks on another script's letter
		// and marks with no base could hide a difference. So could
		// Arabic's own marks: its letters differ by their dots, and its
		// marks include dots and tone marks that put a letter's dots on
		// another's skeleton (ه with two dots above, U+08EB, is ة); the
		// vowel marks everyday Arabic text writes are generic ones.
		if s := info.Script; s == "Inherited" || s == "Common" || s != base || s == "Arabic" {
			return FlagCombining
		}
	case p&charclass.Drawing != 0:
		return FlagDrawing
	}
	switch {
	case p&charclass.NotNFC != 0:
		return FlagNotNFC
	case p&charclass.Compat != 0:
		// Full-width and mathematical letters, ligatures, superscripts:
		// drawn like other characters, some not listed as confusable.
		return FlagCompat
	case p&charclass.Lookalike != 0:
		return FlagLookalike
	}
	return ""
}

// lookalike reports whether a non-ASCII part of r's canonical decomposition
// is listed in the UTS #39 confusables data, or r is a canonical or
// compatibility variant of other characters.
func Lookalike(r rune) bool {
	return charclass.Lookup(r).Props&(charclass.Lookalike|charclass.NotNFC|charclass.Compat) != 0
}

// flagSet collects flags without duplicates, as bits in the order of
// flagOrder.
type flagSet struct{ bits uint32 }

func (s *flagSet) add(f string) { s.bits |= flagBit(f) }

// flagBit is 1<<i for f == flagOrder[i], by a switch rather than a walk
// along flagOrder: the escaper adds a flag for every character it
// escapes.
func flagBit(f string) uint32 {
	switch f {
	case FlagEmpty:
		return 1 << 0
	case FlagLeadingSpace:
		return 1 << 1
	case FlagTrailingSpace:
		return 1 << 2
	case FlagNotOneHost:
		return 1 << 3
	case FlagLines:
		return 1 << 4
	case FlagControl:
		return 1 << 5
	case FlagBidi:
		return 1 << 6
	case FlagInvisible:
		return 1 << 7
	case FlagSpace:
		return 1 << 8
	case FlagSpaceRun:
		return 1 << 9
	case FlagPrivate:
		return 1 << 10
	case FlagNotNFC:
		return 1 << 11
	case FlagCombining:
		return 1 << 12
	case FlagCompat:
		return 1 << 13
	case FlagLookalike:
		return 1 << 14
	case FlagMixedScript:
		return 1 << 15
	case FlagDrawing:
		return 1 << 16
	case FlagRTL:
		return 1 << 17
	}
	return 0
}

// list returns the flags in display order, so a card's JSON does not
// depend on where in a string a problem first appeared. A single flag is
// a slice of flagOrder itself, several a list from lists; nothing writes
// to either.
func (s *flagSet) list() []string {
	switch {
	case s.bits == 0:
		return nil
	case s.bits&(s.bits-1) == 0:
		i := bits.TrailingZeros32(s.bits)
		return flagOrder[i : i+1 : i+1]
	}
	lists.RLock()
	out, ok := lists.m[s.bits]
	lists.RUnlock()
	if ok {
		return out
	}
	out = make([]string, 0, bits.OnesCount32(s.bits))
	for i, f := range flagOrder {
		if s.bits&(1<<i) != 0 {
			out = append(out, f)
		}
	}
	lists.Lock()
	if len(lists.m) < maxLists {
		lists.m[s.bits] = out
	}
	lists.Unlock()
	return out
}

// lists holds the lists of several flags made so far, each shared by
// every string with the same flags (nothing writes to them), up to
// maxLists of them.
var lists = struct {
	sync.RWMutex
	m map[uint32][]string
}{m: map[uint32][]string{}}

const maxLists = 1024
