package escape

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/charclass"
)

// Prose: text that reads as written. In ordinary text (an argument's
// value, the catalog's titles and labels, the policy's reasons, the
// agent's rationale) a word written in one script is shown as itself,
// with the punctuation of its language, and only what could pass for
// something else is escaped. Identifiers, keys and hosts keep the strict
// rule of Show (see Escaper.Prose).
//
// The judgement is the one UTS #39 section 5 makes of an IDN label, made
// of each word (a run of letters, marks and digits):
//
//   - A word mixing scripts beyond the highly restrictive level
//     (AllowedMix) is shown with every character outside ASCII escaped,
//     and flagged mixed-script.
//   - A word outside Latin none of whose characters is distinctive (each
//     has a twin in another script: Cyrillic "сор" for "cop") is whole-
//     script confusable: shown escaped the same way, flagged lookalike-char.
//   - In any other word a character is shown as itself unless it has a
//     twin (see twins.go) that the same place would show instead: of each
//     class of twins, one member is shown in a given place, chosen from
//     what the word's distinctive characters and the character before it
//     say, so that two different strings never show two different twins
//     in the same place. ASCII always wins its class where its script
//     stands; Latin letters twins of ASCII are escaped (ı, ɑ), Cyrillic
//     and Greek ones are not inside Cyrillic and Greek words.
//   - Between words, a punctuation mark or symbol with a twin is escaped,
//     except those the card's font draws apart (DrawnApart), which are
//     shown wherever they stand while every twin of theirs is escaped.
//   - Small capitals and Han and kana strokes (LatinLike) next to a Latin
//     letter are escaped.
//
// Whatever else Show escapes (controls, invisible and unusual spaces,
// non-NFC text, compatibility characters, marks on another script's
// letter, drawing characters) it escapes here too.

// closure groups the scripts whose letters may share a word: Latin with
// those of Chinese, Japanese and Korean.
func closureOf(script string) uint8 {
	switch script {
	case "Latin", "Han", "Hiragana", "Katakana", "Bopomofo", "Hangul":
		return 1
	}
	return 0
}

// twinScript is the script a character counts in among its twins: its
// own, except that the prolonged sound mark ー is a kana.
func twinScript(r rune) string {
	if r < 0x80 {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return "Latin"
		}
		return "Common"
	}
	if r == 0x30fc {
		return "Katakana"
	}
	return charclass.Lookup(r).Script
}

func isKana(script string) bool { return script == "Hiragana" || script == "Katakana" }

// inClosure reports a script whose characters can stand in a word of
// the given (non-Common) script.
func inClosure(script, word string) bool {
	switch script {
	case "Common", "Inherited":
		return true
	}
	if script == word {
		return true
	}
	return closureOf(word) == 1 && closureOf(script) == 1
}

// wordTwin reports a member of a class that can stand in a word and be
// shown there as itself: a letter, mark or digit, not a small capital.
func wordTwin(m rune) bool { return isWordRune(m) }

// ownScriptOnly reports a character whose twins a word can hold are
// all of its own script, not counting, for a modern character in a word
// of modern characters (all false), the twins no living language writes
// (modern.go): в is Cyrillic's own though Cherokee Ᏼ is drawn like it.
func ownScriptOnly(r rune, script string, all bool) bool {
	c := twinsOf(r)
	if c == nil || DrawnApart(r) {
		return true
	}
	if c.ascii && !c.common && script != "Latin" {
		return false
	}
	anyTwin := all || !modern(r)
	for _, m := range c.members {
		if wordTwin(m) && twinScript(m) != script && (anyTwin || modern(m)) {
			return false
		}
	}
	return true
}

// twinScripts returns, into buf, the scripts outside the closure of
// script in which r has a twin that a word can hold: a modern one (see
// modern.go) when r and the rest of its word are modern (all false),
// any otherwise.
func twinScripts(buf ScriptSet, r rune, script string, all bool) ScriptSet {
	if a := asciiMark(r); a != 0 && isWordRune(a) && !inClosure("Latin", script) {
		return buf.With("Latin") // ం is drawn as o
	}
	c := twinsOf(r)
	if c == nil || DrawnApart(r) {
		return buf
	}
	anyTwin := all || !modern(r)
	if c.ascii && !c.common && !inClosure("Latin", script) {
		buf = buf.With("Latin")
	}
	for _, m := range c.members {
		if sc := twinScript(m); wordTwin(m) && !inClosure(sc, script) && (anyTwin || modern(m)) {
			buf = buf.With(sc)
		}
	}
	return buf
}

// wholeScriptConfusable reports a word outside Latin every character of
// which has a twin in one other script: the same word can be written in
// that script (UTS #39 section 4's whole-script confusables). A word
// holding a character no living language writes is judged against every
// twin, one of modern characters only against modern twins (modern.go):
// all reports the former.
func wholeScriptConfusable(w, script string, all bool) bool {
	var common, next ScriptSet
	first := true
	for _, r := range w {
		if r < 0x80 {
			continue // ASCII digits: shared by every script
		}
		sc := twinScript(r)
		if sc == "Common" || sc == "Inherited" {
			continue
		}
		next = twinScripts(next[:0], r, sc, all)
		if first {
			common, first = append(common[:0], next...), false
		} else {
			n := 0
			for _, x := range common {
				if slicesContains(next, x) {
					common[n] = x
					n++
				}
			}
			common = common[:n]
		}
		if len(common) == 0 {
			return false
		}
	}
	return !first && len(common) > 0
}

func slicesContains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// wordView is what prose decides for a whole word.
type wordView struct {
	strict bool   // every character outside ASCII escaped
	flag   string // the flag of a strict word
	script string // the word's script, for its twins: one of its scripts
	prefer string // the script its distinctive characters are in, for a choice among twins
	// letterPrefer is the script of its first distinctive letter (not a
	// mark, which may be drawn as ASCII: Oriya visarga ଃ as 8), for
	// digits yielding to the word's script (yieldsTo).
	letterPrefer string
	latin        bool // the word holds a Latin letter
	perso        bool // the text is written as Persian or Urdu is (persoText)
	// letters counts the word's letters of its script that are not read
	// apart (ReadApart): one of those shows as itself only beside such a
	// letter.
	letters int
}

// judgeWord judges the word w.
func judgeWord(w string) wordView {
	var buf [4]string
	scripts := ScriptSet(buf[:0])
	var v wordView
	for _, r := range w {
		sc := ScriptOf(r)
		if r == 0x30fc {
			sc = "Katakana"
		}
		scripts = scripts.With(sc)
		v.latin = v.latin || sc == "Latin"
	}
	if !scripts.AllowedMix() {
		return wordView{strict: true, flag: FlagMixedScript}
	}
	if len(scripts) == 0 {
		return v
	}
	v.script = scripts[0]
	for _, r := range w {
		if twinScript(r) == v.script && (r >= 0x80 || r > '9') && !ReadApart(r) {
			v.letters++
		}
	}
	// The choice among twins follows the word's characters that have
	// none of another script: those are the same in every string that
	// looks like this one.
	all := !modernWord(w)
	for _, r := range w {
		if r < 0x80 {
			if v.prefer == "" && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				v.prefer = "Latin"
			}
			continue
		}
		sc := twinScript(r)
		if sc == "Common" || sc == "Inherited" || !ownScriptOnly(r, sc, all) {
			continue
		}
		if v.prefer == "" || isKana(sc) && !isKana(v.prefer) {
			v.prefer = sc
		}
		if v.letterPrefer == "" && unicode.IsLetter(r) {
			v.letterPrefer = sc
		}
	}
	if !v.latin && wholeScriptConfusable(w, v.script, all) {
		return wordView{strict: true, flag: FlagLookalike}
	}
	return v
}

// showsAsItself reports whether r, a character with twins, is the one of
// its class shown in this place: in a word judged v (nil between words),
// after a character of script prev ("" at the start of the word), beside
// a neighbour of shape place, in text whose letters are of the scripts
// inText reports.
//
// Of the members that can stand there, the one shown is, in order: the
// letter its languages write far more often (preferredTwin); one of the
// script before it; one of the script the word's distinctive characters
// are in; a kana for a kana; any other; a shared character; a character
// no living language writes (modern.go). Between members so far equal,
// the one of the neighbour's shape (θ beside small letters, Θ beside
// capitals, the digit ١ beside digits and the letter ا beside letters),
// then the lowest code point.
func showsAsItself(r rune, c *twinClass, v *wordView, prev string, place shape, inText func(script string) bool) bool {
	if DrawnApart(r) {
		if sc := drawnScript(r); sc == "" || inText(sc) {
			return true
		}
	}
	if c.anchor != 0 {
		return false
	}
	if v == nil {
		return false // between words: punctuation with a twin is escaped
	}
	if c.ascii && (inClosure("Latin", v.script) || c.common && !yieldsTo(c, v)) {
		return false // ASCII stands here and wins
	}
	best, bestRank, bestFits := rune(-1), 99, false
	for _, m := range c.members {
		sc := twinScript(m)
		// A word of shared characters only (digits, modifier letters)
		// stands among every script: every twin competes there.
		if !wordTwin(m) || v.script != "" && !inClosure(sc, v.script) {
			continue
		}
		rank := 4
		switch {
		case preferredTwin(m), v.perso && persoTwin(m):
			rank = 0
		case sc == "Common" || sc == "Inherited":
			rank = 5
		case prev != "" && sc == prev:
			rank = 1
		case sc == v.prefer:
			rank = 2 // ヘ in a katakana word, へ in a hiragana one
		case isKana(sc) && isKana(v.prefer):
			rank = 3
		}
		if !modern(m) {
			rank = 6
		}
		fits := place != shapeNone && shapeOf(m) == place
		if rank < bestRank || rank == bestRank && (fits && !bestFits || fits == bestFits && m < best) {
			best, bestRank, bestFits = m, rank, fits
		}
	}
	return best == r
}

// textScripts returns the scripts of s's letters, with "Han" for any of
// Chinese, Japanese and Korean.
func textScripts(s string) ScriptSet {
	var out ScriptSet
	for _, r := range s {
		if r < 0x80 || charclass.Lookup(r).Props&charclass.Letterlike == 0 {
			continue
		}
		sc := twinScript(r)
		if closureOf(sc) == 1 && sc != "Latin" {
			sc = "Han"
		}
		if sc != "Common" && sc != "Inherited" && !slicesContains(out, sc) {
			out = out.With(sc)
		}
	}
	return out
}

// preferredTwin reports the letter of its class that its languages write
// far more often than its twins do theirs: Czech ě (not ĕ), Vietnamese Đ
// (not Icelandic Ð or African Ɖ), Thai ท (not the rare ฑ). At most one
// member of a class is preferred.
func preferredTwin(r rune) bool {
	switch r {
	case 'ě', 'Đ', 'ท':
		return true
	}
	return false
}

// isWordRune reports a character of a word: a letter, mark or digit.
func isWordRune(r rune) bool {
	if r < 0x80 {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return charclass.Lookup(r).Props&charclass.Letterlike != 0
}

// wordEnd returns the end of the word starting at s[i].
func wordEnd(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			break
		}
		i += size
	}
	return i
}

// showProse is Show for ordinary text: see the top of this file.
func (e Escaper) showProse(s string, flags flagSet) Shown {
	nfc, nfcKnown := true, false
	var b []byte
	copied := 0 // s[:copied] is in b
	esc := func(at, next int, r rune) {
		if b == nil {
			b = make([]byte, 0, len(s)+16)
		}
		b = append(b, s[copied:at]...)
		b = appendEscape(b, r)
		copied = next
	}
	lit := func(at, next int, text string) {
		if b == nil {
			b = make([]byte, 0, len(s)+16)
		}
		b = append(b, s[copied:at]...)
		b = append(b, text...)
		copied = next
	}
	// The scripts of the text's letters, read once when first asked.
	var scripts ScriptSet
	scriptsRead := false
	inText := func(script string) bool {
		if !scriptsRead {
			scripts, scriptsRead = textScripts(s), true
		}
		return slicesContains(scripts, script)
	}
	var word *wordView
	var wv wordView
	perso := persoText(s)
	wordStart, wordStop := 0, 0
	base, prev := "", ""
	prevLatin := false
	prevRune, prevEscaped := rune(0), false // the last character outside ASCII, and whether it was escaped
	prevBase := rune(0)                     // the last character of the word that is not a mark, 0 at its start
	// Right-to-left text is flagged when it shares the string with
	// left-to-right letters or digits, whose order on screen the
	// bidirectional algorithm changes; a sentence all in Arabic or
	// Hebrew reads as written.
	rtl, ltr := false, false
	for i := 0; i < len(s); {
		at := i
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if at >= wordStop {
			word, base, prev, prevLatin, prevBase = nil, "", "", false, 0
			if isWordRune(r) {
				wordStart, wordStop = at, wordEnd(s, at)
				wv = judgeWord(s[at:wordStop])
				wv.perso = perso
				word = &wv
				if wv.strict {
					flags.add(wv.flag)
				}
			}
		}
		if r < 0x80 {
			prevRune, prevEscaped = r, false
			switch {
			case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
				base, prev, prevLatin, ltr, prevBase = "Latin", "Latin", true, true, r
			case r >= '0' && r <= '9':
				base, prevLatin, ltr = "", false, true
				if word != nil {
					prevBase = r
				}
			}
			switch {
			case drawnBeside(r, s, at, i) || r >= '0' && r <= '9' && digitYields(r, word):
				esc(at, i, r) // a letter or mark of the script beside it, or of the word's, is drawn like it
				flags.add(FlagLookalike)
				prevEscaped = true
			case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			case r == '\\':
				lit(at, i, `\\`)
			case r == '"' && e.Quote:
				lit(at, i, `\"`)
			case r == '\n' && e.KeepNewlines:
			case r == '\n':
				lit(at, i, `\n`)
				flags.add(FlagLines)
			case r == '\r':
				lit(at, i, `\r`)
				flags.add(FlagControl)
			case r == '\t':
				lit(at, i, `\t`)
				flags.add(FlagControl)
			case r == ' ':
				n := 1
				for i < len(s) && s[i] == ' ' {
					n++
					i++
				}
				if n > 1 {
					lit(at, i, `\{`+itoa(n)+` spaces}`)
					flags.add(FlagSpaceRun)
				}
			case r < 0x20 || r == 0x7f:
				esc(at, i, r)
				flags.add(FlagControl)
			}
			continue
		}
		if r == utf8.RuneError {
			esc(at, i, r)
			flags.add(FlagLookalike)
			continue
		}
		info := charclass.Lookup(r)
		if !nfcKnown && info.Props&(charclass.Mark|charclass.Combines|charclass.NotNFC) != 0 {
			nfc, nfcKnown = isNFC(s), true
			if !nfc {
				flags.add(FlagNotNFC)
			}
		}
		drawn := DrawnApart(r)
		f := hiddenKindOf(info, nfc, base)
		if f == FlagLookalike || drawn && (f == FlagCompat || f == FlagNotNFC && nfc) {
			f = ""
		}
		if sc := drawnScript(r); drawn && sc != "" && info.Props&charclass.Compat != 0 && !inText(sc) {
			f = FlagCompat // a full-width form outside the text of its script
		}
		sc := twinScript(r)
		switch {
		case f != "":
		case word != nil && word.strict:
			f = word.flag
		case phonetic(r, info) || LatinLike(r) && (prevLatin || word != nil && word.latin && nextLatin(s, i)):
			f = FlagLookalike
		case markHidden(r, s, i):
			f = FlagLookalike // drawn as an ASCII character that could stand here
		case info.Props&charclass.Mark != 0 && markTwin(r):
			f = FlagCombining // drawn as another mark of its script is (Hebrew ׂ as ֹ)
		case info.Props&charclass.Mark != 0 && foldMark(r) && spellsFold(s, at, i, r):
			f = FlagCombining
		case info.Props&charclass.Mark != 0 && markOfLetter(prevRune):
			f = FlagCombining // after a mark drawn as a letter, it would pass for that letter's mark
		case markLetter(r) && word != nil && at > wordStart && !(nfc && carriesMark(s, i, r, info.Script)):
			f = FlagLookalike // where its twin mark could stand
		case unreadable(r):
			f = FlagLookalike
		case ReadApart(r) && !(word != nil && twinScript(r) == word.script && word.letters > 0):
			f = FlagLookalike // read apart from its twin only in a word of its language
		case r == 'ي' && perso:
			f = FlagLookalike // in Persian or Urdu text ی is shown, drawn as ي inside a word
		case prevRune != 0 && !prevEscaped && spellsTwin(prevRune, r):
			f = FlagLookalike // the run spells another character's fold
		case i < len(s) && s[i] < 0x80 && spellsTwin(r, rune(s[i])):
			f = FlagLookalike // this and the ASCII after it spell another character's fold
		default:
			if c := twinsOf(r); c != nil && !showsAsItself(r, c, word, prev, placeShape(s, wordStart, i, wordStop, prevBase), inText) {
				f = FlagLookalike
			}
		}
		prevRune, prevEscaped = r, f != ""
		if f != "" {
			flags.add(f)
			esc(at, i, r)
		} else if info.Props&charclass.RTL != 0 {
			rtl = true
		} else if info.Props&charclass.Letterlike != 0 && info.Props&charclass.Mark == 0 {
			ltr = true
		}
		if info.Props&charclass.Mark == 0 {
			if word != nil {
				prevBase = r
			}
			base = info.Script
			prevLatin = sc == "Latin"
			if sc != "Common" && sc != "Inherited" {
				prev = sc
			}
		}
	}
	if rtl && ltr {
		flags.add(FlagRTL)
	}
	if b == nil {
		return Shown{Text: s, Flags: flags.list()}
	}
	b = append(b, s[copied:]...)
	return Shown{Text: string(b), Flags: flags.list()}
}

// placeShape is the shape (see modern.go) the character ending at s[i],
// in the word s[start:stop], takes from its place: a capital for the
// first letter of a sentence; else that of the next character that is
// not a mark, if it has one whatever twin of it stands there; else that
// of the one before (prevBase, 0 at the word's start). So θ shows in
// "θέλω" and "Αθήνα", Θ in "ΑΘΗΝΑ" and at the head of a sentence. What
// decides is the text before the character, which two strings that look
// alike up to it share, and the shapes of its neighbours, which their
// twins share.
func placeShape(s string, start, i, stop int, prevBase rune) shape {
	if prevBase == 0 && sentenceStart(s[:start]) {
		return shapeUpper
	}
	for j := i; j < stop; {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if r >= 0x80 && charclass.Lookup(r).Props&charclass.Mark != 0 {
			continue
		}
		if sh := neighbourShape(r); sh != shapeNone {
			return sh
		}
		break
	}
	if prevBase != 0 {
		return neighbourShape(prevBase)
	}
	return shapeNone
}

// sentenceStart reports whether a word after text before starts a
// sentence: before is empty, or ends in a full stop, question or
// exclamation mark, ellipsis or line break, then spaces and opening
// quotes or brackets.
func sentenceStart(before string) bool {
	t := strings.TrimRight(before, " \t\"'([«“‘„¿¡")
	if t == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(t)
	return strings.ContainsRune(".!?;…\n\r\u037e\u3002", r)
}

// carriesMark reports a mark of script at s[i] that prose shows after a
// letter of its script: not one drawn as another mark (markTwin) nor one
// that spells a letter's fold there, or with the letter another's. A letter drawn as a mark
// (markLetter) is shown only with such a mark on it, which the twin mark
// could not carry unescaped.
func carriesMark(s string, i int, letter rune, script string) bool {
	if i >= len(s) {
		return false
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	info := charclass.Lookup(r)
	if info.Props&charclass.Mark == 0 || info.Script != script || markTwin(r) || unreadable(r) || spellsTwin(letter, r) {
		return false
	}
	return !(foldMark(r) && spellsFold(s, i, i+size, r))
}

// nextLatin reports a Latin letter at s[i].
func nextLatin(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return ScriptOf(r) == "Latin"
}

func itoa(n int) string {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(buf[i:])
}

// appendEscape appends \u{HEX}, at least four upper-case hex digits.
func appendEscape(b []byte, r rune) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, `\u{`...)
	digits := 4
	for v := uint32(r) >> 16; v != 0; v >>= 4 {
		digits++
	}
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hex[(uint32(r)>>(4*i))&0xf])
	}
	return append(b, '}')
}

func isNFC(s string) bool { return norm.NFC.IsNormalString(s) }
