package escape

import (
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentstepup/asu/card/internal/charclass"
	"github.com/agentstepup/asu/card/internal/confusable"
)

// Modern twins. UTS #39 pairs letters of living orthographies with
// letters nobody writes today: archaic Greek Ͷ with Cyrillic И, Greek
// phonetic ᴦ with г, the notation of ancient Greek music with З, Cherokee
// and Deseret with half the Cyrillic alphabet. Counted as twins, those
// decide what living text shows: "Итого" (Total) would be whole-script
// confusable with Greek, a З lose to an ASCII 3, a common letter to an
// archaic one by code point.
//
// So the judgement of a word of modern characters weighs only modern
// twins: a character of a script UAX #31 recommends for identifiers (its
// Table 5, the scripts in customary modern use) and not one of the
// archaic, phonetic or notational blocks of those scripts. A word holding
// any other character is judged against every twin of every character
// it holds. That keeps the card injective: of two words that look alike,
// one modern and one not, the other is judged against the modern one's
// letters, which are its twins, and so is whole-script confusable (or,
// of one script, loses each place to the modern letter); two that each
// hold an archaic letter ("ψϳ", "ѱј") are both judged against every twin
// and escaped.

// recommendedScripts are the scripts of UAX #31 Table 5, with Common and
// Inherited.
var recommendedScripts = map[string]bool{
	"Common": true, "Inherited": true,
	"Arabic": true, "Armenian": true, "Bengali": true, "Bopomofo": true, "Cyrillic": true,
	"Devanagari": true, "Ethiopic": true, "Georgian": true, "Greek": true, "Gujarati": true,
	"Gurmukhi": true, "Han": true, "Hangul": true, "Hebrew": true, "Hiragana": true,
	"Kannada": true, "Katakana": true, "Khmer": true, "Lao": true, "Latin": true,
	"Malayalam": true, "Myanmar": true, "Oriya": true, "Sinhala": true, "Tamil": true,
	"Telugu": true, "Thaana": true, "Thai": true, "Tibetan": true,
}

// archaic reports the letters and signs of a recommended script that no
// living orthography writes: archaic and symbol-variant Greek (Ͱ-ͳ, Ͷ ͷ,
// Ϳ, ϗ-ϡ, ϰ-Ͽ), historic Cyrillic (Ѡ-ҁ, the Cyrillic Extended-B and -C
// blocks), the phonetic extensions of every script (ᴀ-ᶿ), ancient Greek
// numbers and musical notation, and Latin's phonetic letters (phonetic).
func archaic(r rune, info charclass.Info) bool {
	switch {
	case r >= 0x0370 && r <= 0x0373, r == 0x0376, r == 0x0377, r == 0x037f,
		r >= 0x03cf && r <= 0x03e1, r >= 0x03f0 && r <= 0x03ff:
		return true // Greek
	case r >= 0x0460 && r <= 0x0481, r >= 0xa640 && r <= 0xa69f, r >= 0x1c80 && r <= 0x1c8f:
		return true // Cyrillic
	case r >= 0x1d00 && r <= 0x1dbf:
		return true // phonetic extensions, of any script
	case r >= 0x10140 && r <= 0x1018f, r >= 0x1d200 && r <= 0x1d24f:
		return true // ancient Greek numbers and musical notation
	}
	return phonetic(r, info)
}

// modernWord reports a word of modern characters only.
func modernWord(w string) bool {
	for _, r := range w {
		if !modern(r) {
			return false
		}
	}
	return true
}

// modern reports a character that counts as a twin when a word is
// judged: see the top of this file. ASCII is modern.
func modern(r rune) bool {
	if r < 0x80 {
		return true
	}
	info := charclass.Lookup(r)
	return recommendedScripts[twinScript(r)] && !archaic(r, info)
}

// shape is what a reader sees of a letter's kind beside its neighbours:
// a digit, a capital, a small letter, or a letter of a script without
// case.
type shape uint8

const (
	shapeNone  shape = iota // unknown: a neighbour whose twins differ in it, or none
	shapeDigit              // a digit
	shapeUpper              // a capital letter
	shapeLower              // a small letter
	shapeOther              // a letter without case
)

func shapeOf(r rune) shape {
	switch {
	case unicode.IsDigit(r):
		return shapeDigit
	case unicode.IsUpper(r):
		return shapeUpper
	case unicode.IsLower(r):
		return shapeLower
	}
	return shapeOther
}

// neighbourShape is the shape a character r shows whatever twin of it a
// string holds: its own when every twin a word can hold has the same
// one, shapeNone otherwise. Two strings that look alike hold, in one
// place, r or a twin of it, so they agree on this.
func neighbourShape(r rune) shape {
	sh := shapeOf(r)
	c := twinsOf(r)
	if r < 0x80 {
		c = asciiTwins(r)
	}
	if c != nil && !sameShape(c, sh) {
		return shapeNone
	}
	return sh
}

// sameShape reports whether every member of c a word can hold has shape
// sh.
func sameShape(c *twinClass, sh shape) bool {
	for _, m := range c.members {
		if wordTwin(m) && shapeOf(m) != sh {
			return false
		}
	}
	return true
}

// asciiTwins returns the class the ASCII letter or digit r folds into,
// or nil.
func asciiTwins(r rune) *twinClass {
	twinData.once.Do(loadTwins)
	if id, ok := twinData.asciiClass[r]; ok {
		return &twinData.classes[id]
	}
	return nil
}

// yieldsTo reports a class of twins of an ASCII digit that, in a word
// whose distinctive characters are of a script other than Latin's, shows
// its modern member of that script rather than the digit: З in
// "Здравствуйте", Bengali ৪ in "১২৪". The digit is escaped there.
func yieldsTo(c *twinClass, v *wordView) bool {
	if !c.digit || v == nil || v.letterPrefer == "" || inClosure("Latin", v.letterPrefer) {
		return false
	}
	for _, m := range c.members {
		if wordTwin(m) && modern(m) && twinScript(m) == v.letterPrefer {
			return true
		}
	}
	return false
}

// digitYields reports an ASCII digit d that is escaped in a word judged
// v, as a letter or digit of the word's script drawn like it is shown
// there instead (yieldsTo).
func digitYields(d rune, v *wordView) bool {
	if v == nil || v.strict {
		return false
	}
	c := asciiTwins(d)
	return c != nil && c.common && yieldsTo(c, v)
}

// Persian and Urdu. Their yeh ی is drawn as Arabic alef maksura ى at the
// end of a word and as Arabic yeh ي inside one, and their keheh ک as
// Arabic kaf ك at the start and in the middle: one of each pair is shown
// in a place, and by speakers, the Arabic letter. In text written as
// Persian or Urdu is, ی and ک are shown instead, and ى, ك and ي escaped.
//
// persoLetters are the letters only Persian and Urdu (not Arabic) write
// that nothing else is drawn like, or that always win their class (ٹ
// over Sindhi ڻ): in one of two strings that look alike, such a letter is
// in the other too, so both are judged alike. Teh marbuta ة is written
// in Arabic, not in Persian or Urdu.
var persoLetters = []rune{'پ', 'چ', 'ژ', 'گ', 'ٹ', 'ڈ', 'ڑ'}

// persoText reports text written as Persian or Urdu is: holding one of
// persoLetters and no teh marbuta ة.
func persoText(s string) bool {
	found := false
	for _, r := range s {
		switch {
		case r == 'ة':
			return false
		case r >= 0x0600 && r <= 0x06ff && slices.Contains(persoLetters, r):
			found = true
		}
	}
	return found
}

// persoTwin reports the letters shown in Persian or Urdu text
// (persoText) over their Arabic twins: yeh ی and keheh ک.
func persoTwin(r rune) bool { return r == 'ی' || r == 'ک' }

// Marks drawn as ASCII. UTS #39 draws a few spacing marks as an ASCII
// character: the visarga of Devanagari and Gujarati ः ઃ as a colon,
// Oriya's ଃ as 8, the anusvara of Telugu, Kannada, Malayalam and Sinhala
// (ం ಂ ം ං) as o. Where such a mark stands, so could the ASCII, so in
// each place one of the two is escaped: the ASCII digit or letter beside
// a letter of the mark's script (the mark is how those words are
// written), and of the colon and the visarga, the colon inside a word of
// the visarga's script ("दु:ख") and the visarga elsewhere ("नमः" at a
// word's end, where a colon ends labels: "नाम:"). A word of such marks
// and digits drawn as ASCII ("౦ం", "oo") is whole-script confusable with
// Latin.

// drawnAs holds, for each ASCII character UTS #39 draws as a character
// of another script, the scripts of the letters drawn as it (| and 1 as
// Hebrew ו and Arabic ا, 0 as Cyrillic О; ASCII letters are left out, a
// word holding them and another script's letters being mixed) and of the
// spacing marks drawn as it (8 as Oriya ଃ); and each such mark's ASCII.
var drawnAs struct {
	once    sync.Once
	letters map[rune]map[string]bool
	marks   map[rune]map[string]bool
	mark    map[rune]rune
}

func loadDrawnAs() {
	twinData.once.Do(loadTwins)
	add := func(m map[rune]map[string]bool, a rune, script string) {
		if m[a] == nil {
			m[a] = map[string]bool{}
		}
		m[a][script] = true
	}
	drawnAs.letters, drawnAs.marks, drawnAs.mark = map[rune]map[string]bool{}, map[rune]map[string]bool{}, map[rune]rune{}
	for a, id := range twinData.asciiDrawn {
		for _, m := range twinData.classes[id].members {
			if sc := twinScript(m); wordTwin(m) && modern(m) && sc != "Latin" && sc != "Common" && sc != "Inherited" {
				add(drawnAs.letters, a, sc)
			}
		}
	}
	charclass.Each(charclass.Mark, func(r rune, info charclass.Info) {
		sk, ok := confusable.Lookup(r)
		if !ok || len(sk) != 1 || sk[0] >= 0x80 || !unicode.Is(unicode.Mc, r) {
			return
		}
		drawnAs.mark[r] = rune(sk[0])
		add(drawnAs.marks, rune(sk[0]), info.Script)
	})
}

// asciiMark returns the ASCII character the spacing mark r is drawn as,
// or 0.
func asciiMark(r rune) rune {
	drawnAs.once.Do(loadDrawnAs)
	return drawnAs.mark[r]
}

// scriptOf is the script of a character outside ASCII, "" for ASCII.
func scriptOf(r rune) string {
	if r < 0x80 || r == utf8.RuneError {
		return ""
	}
	return charclass.Lookup(r).Script
}

// drawnBeside reports an ASCII character a, at s[at:i], drawn as a
// character of the script of a letter it touches, where that character
// could stand: a letter of that script before or after it ("ד|ח" is not
// shown as "דוח"), or a spacing mark of the script of the letter before
// it, past any marks on that letter ("ଅ8" is not shown as "ଅଃ"; a colon
// only between such a letter and a character of a word, "दु:ख"). Latin
// is left out: ASCII is the card's own reading of it.
func drawnBeside(a rune, s string, at, i int) bool {
	drawnAs.once.Do(loadDrawnAs)
	letters, marks := drawnAs.letters[a], drawnAs.marks[a]
	if letters == nil && marks == nil {
		return false
	}
	before := s[:at]
	for before != "" {
		r, size := utf8.DecodeLastRuneInString(before)
		if r < 0x80 || charclass.Lookup(r).Props&charclass.Mark == 0 {
			break
		}
		before = before[:len(before)-size]
	}
	base, _ := utf8.DecodeLastRuneInString(before)
	after, _ := utf8.DecodeRuneInString(s[i:])
	switch {
	case letters[scriptOf(base)] || letters[scriptOf(after)]:
		return true
	case marks[scriptOf(base)]:
		return a != ':' || i < len(s) && isWordRune(after)
	}
	return false
}

// markHidden reports a spacing mark r, at s[..i], drawn as ASCII that is
// escaped there: a visarga, drawn as a colon, except before a letter,
// inside a word (not before another mark: "कःःक" would read as "क::क").
// The others are shown, the ASCII beside their script escaped instead
// (drawnBeside).
func markHidden(r rune, s string, i int) bool {
	if asciiMark(r) != ':' {
		return false
	}
	after, _ := utf8.DecodeRuneInString(s[i:])
	return i >= len(s) || !unicode.IsLetter(after)
}
