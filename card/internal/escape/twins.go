package escape

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/charclass"
	"github.com/agentstepup/asu/card/internal/confusable"
)

// Twins are characters a reader cannot tell apart: those whose folds are
// equal, the fold of a character being its canonical decomposition with
// every non-ASCII part replaced by its UTS #39 prototype. Only characters
// the card could show as themselves take part (not controls, invisible,
// compatibility or non-NFC characters, marks, which are always escaped
// or judged by their base), and the characters drawn apart from their
// look-alikes (DrawnApart) are their own class.
//
// Text shows at most one character of each class as itself in any one
// context (see prose.go); that is what keeps it injective under
// look-alikes while letting every script be read as written.

// twinClass is one class of twins of two or more members; ascii says
// that ASCII text (a character, or a sequence such as "rn") folds to it
// too.
type twinClass struct {
	members []rune // sorted
	ascii   bool
	common  bool // the ASCII text holds more than letters: it stands among the text of every script
	anchor  rune // a member drawn apart (DrawnApart) that is the others' prototype: the only one shown; 0 for none
	digit   bool // the ASCII text is one digit: З and ৪ are in the classes of 3 and 8
}

var twinData struct {
	once    sync.Once
	classOf map[rune]int32 // index into classes
	classes []twinClass

	// Characters whose fold is two characters that a run of two shown
	// characters could spell (ы is "ƅi"): the second of such a run is
	// escaped after the first, or the first before an ASCII second.
	firstsOf   map[string]map[string]bool // fold of the second -> folds of the first
	lastRunes  map[rune]string            // characters folding to a non-ASCII second, with their fold
	foldMarks  map[rune]bool              // marks inside a fold: escaped where the text around them spells it
	markFolds  map[rune][]string          // the folds each of those marks is inside
	unreadable map[rune]bool              // characters with a longer fold that shown ones could spell: escaped
	asciiClass map[rune]int32             // ASCII letter or digit -> the class that folds to it
	asciiDrawn map[rune]int32             // ASCII digit or sign -> the class of the letter UTS #39 draws it as: | and 1 as l
}

// candidate reports a character the card may show as itself.
func candidate(r rune, info charclass.Info) bool {
	const never = charclass.Control | charclass.Bidi | charclass.Invisible | charclass.Space | charclass.Private |
		charclass.Mark | charclass.Drawing | charclass.NotNFC | charclass.Compat
	if r < 0x80 || ReadApart(r) || phonetic(r, info) {
		return false
	}
	return info.Props&never == 0 || DrawnApart(r)
}

// Fold is the fold of s: its NFD form with every non-ASCII part replaced
// by its UTS #39 prototype.
func Fold(s string) string {
	var b strings.Builder
	for _, p := range norm.NFD.String(s) {
		if sk, ok := confusable.Lookup(p); ok && p >= 0x80 {
			if sk == "l" && unicode.IsUpper(p) {
				// A capital drawn as a stroke (Greek Ι, Cyrillic І and Ӏ)
				// is drawn as the capital I, which the card tells from
				// l: so Ὶ is Ì's twin and Ї is Ï's.
				sk = "I"
			}
			b.WriteString(sk)
		} else {
			b.WriteRune(p)
		}
	}
	return b.String()
}

func loadTwins() {
	byFold := map[string][]rune{}
	var multi []rune
	twinData.foldMarks = map[rune]bool{}
	twinData.markFolds = map[rune][]string{}
	charclass.Each(charclass.Lookalike, func(r rune, info charclass.Info) {
		if candidate(r, info) {
			k := Fold(string(r))
			byFold[k] = append(byFold[k], r)
			if utf8.RuneCountInString(k) > 1 {
				multi = append(multi, r)
				for _, p := range k {
					if q := charclass.Lookup(p); q.Props&charclass.Mark != 0 && q.Script != "Inherited" && q.Script != "Common" {
						twinData.foldMarks[p] = true
						if !slices.Contains(twinData.markFolds[p], k) {
							twinData.markFolds[p] = append(twinData.markFolds[p], k)
						}
					}
				}
			}
		}
	})
	twinData.firstsOf = map[string]map[string]bool{}
	twinData.unreadable = map[rune]bool{}
	lastKeys := map[string]bool{}
	for _, r := range multi {
		k := Fold(string(r))
		if safeMulti(r) || isASCII(k) {
			continue
		}
		rs := []rune(k)
		if len(rs) != 2 {
			twinData.unreadable[r] = true
			continue
		}
		first, last := string(rs[0]), string(rs[1])
		if twinData.firstsOf[last] == nil {
			twinData.firstsOf[last] = map[string]bool{}
		}
		twinData.firstsOf[last][first] = true
		if rs[1] >= 0x80 {
			lastKeys[last] = true
		}
	}
	twinData.lastRunes = map[rune]string{}
	for k := range lastKeys {
		for _, r := range byFold[k] {
			twinData.lastRunes[r] = k
		}
		if r, size := utf8.DecodeRuneInString(k); size == len(k) {
			twinData.lastRunes[r] = k
		}
	}
	// A prototype is a twin of what folds to it.
	for k, list := range byFold {
		if p := norm.NFC.String(k); utf8.RuneCountInString(p) == 1 {
			r, _ := utf8.DecodeRuneInString(p)
			if info := charclass.Lookup(r); candidate(r, info) && !slices.Contains(list, r) && Fold(p) == k {
				byFold[k] = append(list, r)
			}
		}
	}
	twinData.classOf = map[rune]int32{}
	twinData.asciiClass = map[rune]int32{}
	for k, list := range byFold {
		ascii := true
		for i := 0; i < len(k); i++ {
			ascii = ascii && k[i] >= 0x20 && k[i] < 0x7f
		}
		// A class whose prototype is a character told apart (ς, the
		// prototype of ϛ) shows that character only.
		anchor := rune(0)
		if r, size := utf8.DecodeRuneInString(k); size == len(k) && (ReadApart(r) || DrawnApart(r)) {
			anchor = r
		}
		if len(list) < 2 && !ascii && anchor == 0 {
			continue
		}
		slices.Sort(list)
		id := int32(len(twinData.classes))
		c := twinClass{members: list, ascii: ascii, anchor: anchor}
		for i := 0; ascii && i < len(k); i++ {
			if b := k[i] | 0x20; b < 'a' || b > 'z' {
				c.common = true
			}
		}
		for _, r := range list {
			// A member drawn apart that is the others' prototype must be
			// the only one of the class shown: the others look like it.
			if DrawnApart(r) && string(r) == k {
				c.anchor = r
			}
		}
		twinData.classes = append(twinData.classes, c)
		for _, r := range list {
			twinData.classOf[r] = id
		}
		if len(k) == 1 && isWordRune(rune(k[0])) {
			twinData.asciiClass[rune(k[0])] = id
			twinData.classes[id].digit = k[0] >= '0' && k[0] <= '9'
		}
	}
	twinData.asciiDrawn = map[rune]int32{}
	for a := rune('!'); a <= '~'; a++ {
		if a|0x20 >= 'a' && a|0x20 <= 'z' {
			continue // letters: a word holding them and another script's letters is mixed
		}
		sk, ok := confusable.Lookup(a)
		if !ok || len(sk) != 1 {
			continue
		}
		if id, ok := twinData.asciiClass[rune(sk[0])]; ok {
			twinData.asciiDrawn[a] = id
		}
	}
}

// twinsOf returns the class of r, or nil when no other character looks
// like it.
func twinsOf(r rune) *twinClass {
	twinData.once.Do(loadTwins)
	if id, ok := twinData.classOf[r]; ok {
		return &twinData.classes[id]
	}
	return nil
}

// ReadApart reports letters that UTS #39 lists with a look-alike but that
// a reader of their language tells from it in every word, and that the
// language writes constantly: Turkish dotless ı (i has its dot), Greek σ
// and ς (ο has no tail), Hebrew yod י (a letter of the line's height
// band, not an apostrophe) and final nun ן (it descends below the line,
// where vav ו stands on it), the ligatures æ and œ of Danish, Norwegian
// and French (one cell of the card's monospace font; "ae" takes two),
// Cyrillic б (a flat stroke where 6 curves), Arabic yeh ي (UTS #39
// folds Arabic letters to their dotless skeletons; its two dots are what
// tells it from alef maksura ى), Persian and Urdu peh پ (its three dots
// stand below, where theh ث has them above; the letters that share its
// shape in the middle of a word, ڽ and ۑ, keep their class with ث, of
// which only ث is shown), and the Thai consonants ค ด ต and ม ฆ,
// which UTS #39 pairs by outline but every Thai reader tells apart by
// where their loops and notches stand (as b from d). Ordinary text shows
// them as themselves, and
// their look-alikes keep their own classes; identifiers and hosts escape
// them. A reader tells them apart inside a word of their language only:
// prose shows one as itself in a word holding another letter of its
// script, and judges it as any twin elsewhere (б among digits is a 6).
func ReadApart(r rune) bool {
	switch r {
	case 'ı', 'σ', 'ς', 'י', 'ן', 'æ', 'Æ', 'œ', 'Œ', 'б', 'ي', 'پ', 'ค', 'ด', 'ต', 'ม', 'ฆ':
		return true
	}
	return false
}

// DrawnApart reports punctuation and symbols that UTS #39 lists with an
// ASCII look-alike but that the card's monospace font draws apart from
// it, by shape or width: curly quotes and apostrophes (straight ones are
// ASCII), the bullet and the middle dot, the multiplication sign, the
// euro and pound signs, the degree sign, guillemets, the danda of
// Devanagari, and the ideographic punctuation of Chinese and
// Japanese (two cells wide), with the full-width comma, exclamation and
// question marks, colon, semicolon and parentheses those languages write
// (two cells wide as well). Dashes and the ellipsis are not among them:
// a hurried reader takes them for a hyphen and three dots, so they stay
// escaped, as do the other full-width forms; nor is the low single quote ‚, which
// the font draws as a comma, point for point. Ordinary text shows them
// as themselves, the punctuation of one script's writing only in text
// holding that script's letters (drawnScript); identifiers and hosts
// escape them as every look-alike.
func DrawnApart(r rune) bool {
	switch r {
	case '‘', '’', '‛', '“', '”', '„', '‟', '•', '×', '·', '′', '″',
		'。', '、', '「', '」', '『', '』', '【', '】', '〈', '〉', '《', '》', '〔', '〕', '・',
		'，', '！', '？', '：', '；', '（', '）',
		'،', '؛', '؟', '٪', '۔', '״', '׳', '¡', '¿', '«', '»', '‹', '›', '€', '£', '°', '।':
		return true
	}
	return false
}

// drawnScript is the script whose writing a character drawn apart
// (DrawnApart) is punctuation of, "" for one every script writes: prose
// shows the Arabic, Hebrew and Devanagari marks, and the ideographic ones ("Han" for
// every script of Chinese, Japanese and Korean), as themselves only in
// text holding letters of that script. The full-width forms among them
// are compatibility characters: elsewhere they are escaped as every
// full-width form, twin or not.
func drawnScript(r rune) string {
	switch r {
	case '،', '؛', '؟', '٪', '۔':
		return "Arabic"
	case '״', '׳':
		return "Hebrew"
	case '।':
		return "Devanagari"
	case '。', '、', '「', '」', '『', '』', '【', '】', '〈', '〉', '《', '》', '〔', '〕', '・',
		'，', '！', '？', '：', '；', '（', '）':
		return "Han"
	}
	return ""
}

// safeMulti reports a character whose fold no run of characters shown
// as themselves can spell: the fold holds a generic combining mark (which
// prose escapes wherever it stands without its letter), or the character
// is a Hangul syllable (whose jamo, written apart, NFC joins, so text
// writing them apart is not in NFC and is escaped).
func safeMulti(r rune) bool {
	if r >= 0xac00 && r <= 0xd7a3 {
		return true
	}
	for _, p := range Fold(string(r)) {
		if info := charclass.Lookup(p); info.Props&charclass.Mark != 0 {
			return true // generic marks prose escapes alone; the others are foldMarks
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// spellsTwin reports a run of two characters, first then second, whose
// folds spell the fold of one character.
func spellsTwin(first, second rune) bool {
	twinData.once.Do(loadTwins)
	var k string
	if second < 0x80 {
		k = string(second)
	} else {
		var ok bool
		if k, ok = twinData.lastRunes[second]; !ok {
			return false
		}
	}
	firsts := twinData.firstsOf[k]
	return firsts != nil && firsts[Fold(string(first))]
}

// foldMark reports a mark of a script that spells, after a letter, the
// fold of another letter (Arabic ۛ after س spells ش, Devanagari ् in र्इ
// spells ई): prose escapes it where it spells one (spellsFold).
func foldMark(r rune) bool {
	twinData.once.Do(loadTwins)
	return twinData.foldMarks[r]
}

// foldReach is how many characters around a mark spellsFold folds: more
// than any fold holding a mark is long.
const foldReach = 4

// spellsFold reports whether the mark r, at s[at:next], is where the
// text around it spells the fold of a letter that holds r in its fold:
// the folded text before it ends with the part of the fold before r,
// and the folded text after it starts with the part after. Elsewhere
// (स् before त in नमस्ते, which spells no letter) the mark is the one
// its letter takes, and is shown.
func spellsFold(s string, at, next int, r rune) bool {
	twinData.once.Do(loadTwins)
	folds := twinData.markFolds[r]
	if len(folds) == 0 {
		return false
	}
	from := at
	for n := 0; n < foldReach && from > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(s[:from])
		from -= size
	}
	to := next
	for n := 0; n < foldReach && to < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[to:])
		to += size
	}
	before, after := Fold(s[from:at]), Fold(s[next:to])
	mark := string(r)
	for _, k := range folds {
		for i := strings.Index(k, mark); i >= 0; {
			if strings.HasSuffix(before, k[:i]) && strings.HasPrefix(after, k[i+len(mark):]) {
				return true
			}
			j := strings.Index(k[i+len(mark):], mark)
			if j < 0 {
				break
			}
			i += len(mark) + j
		}
	}
	return false
}

// markTwin reports a mark that UTS #39 draws as another mark of its own
// script, and that is not the one of them shown: of each such class the
// prototype is shown when it is a mark of the class's script (Malayalam
// vowel sign U ു, of which UU ൂ is a twin), else the mark of the lowest
// code point (Hebrew holam ֹ); the others (holam haser ֺ, sin dot ׂ,
// which sit where it sits) are escaped. One fixed member per class keeps
// the marks injective: two marks drawn alike are never both shown.
func markTwin(r rune) bool {
	markTwins.once.Do(loadMarkTwins)
	return markTwins.escaped[r]
}

var markTwins struct {
	once     sync.Once
	escaped  map[rune]bool
	letters  map[rune]bool // letters and digits a mark of their script is drawn as
	ofLetter map[rune]bool // the marks drawn as those letters
}

// scriptMark reports a mark of a script (not a generic one).
func scriptMark(info charclass.Info) bool {
	return info.Props&charclass.Mark != 0 && info.Script != "Inherited" && info.Script != "Common"
}

func loadMarkTwins() {
	type key struct{ proto, script string }
	classes := map[key][]rune{}
	markTwins.letters = map[rune]bool{}
	charclass.Each(charclass.Lookalike, func(r rune, info charclass.Info) {
		if !scriptMark(info) {
			return
		}
		p, ok := confusable.Lookup(r)
		if !ok || p == string(r) {
			return
		}
		k := key{p, info.Script}
		classes[k] = append(classes[k], r)
		if letterProto(p, info.Script) {
			q, _ := utf8.DecodeRuneInString(p)
			markTwins.letters[q] = true // Tamil ா is drawn as the letter ஈ
		}
	})
	// Letters and digits with the prototype of a mark of their script
	// (Telugu ౦ and ం both fold to o).
	withLetter := map[key]bool{}
	charclass.Each(charclass.Lookalike, func(r rune, info charclass.Info) {
		if info.Props&charclass.Mark != 0 {
			return
		}
		if p, ok := confusable.Lookup(r); ok && len(classes[key{p, info.Script}]) > 0 {
			markTwins.letters[r] = true
			withLetter[key{p, info.Script}] = true
		}
	})
	markTwins.ofLetter = map[rune]bool{}
	for k, list := range classes {
		if withLetter[k] || letterProto(k.proto, k.script) {
			for _, r := range list {
				markTwins.ofLetter[r] = true
			}
		}
	}
	markTwins.escaped = map[rune]bool{}
	for k, list := range classes {
		shown := slices.Min(list)
		if q, size := utf8.DecodeRuneInString(k.proto); size == len(k.proto) {
			if qi := charclass.Lookup(q); scriptMark(qi) && qi.Script == k.script {
				shown = q // the prototype is itself a mark of the script
			}
		}
		for _, r := range list {
			if r != shown {
				markTwins.escaped[r] = true
			}
		}
	}
}

// letterProto reports a prototype that is one letter or digit of script
// (not a mark).
func letterProto(p, script string) bool {
	q, size := utf8.DecodeRuneInString(p)
	if size != len(p) || q < 0x80 {
		return false
	}
	qi := charclass.Lookup(q)
	return qi.Script == script && qi.Props&charclass.Mark == 0
}

// markLetter reports a letter or digit that UTS #39 draws as a mark of
// its own script (Tamil ஈ and ன as the vowel signs ா and ை, Telugu ౦
// as the anusvara ం, Malayalam ഠ as ം): prose shows it where its twin
// mark cannot be shown, at the start of a word or carrying a mark of
// its script (ன் in நன்றி: a mark after the twin mark is escaped, see
// markOfLetter), and escapes it elsewhere in a word, where the mark,
// which its languages write on nearly every word, is shown.
func markLetter(r rune) bool {
	markTwins.once.Do(loadMarkTwins)
	return markTwins.letters[r]
}

// markOfLetter reports a mark that UTS #39 draws as a letter or digit of
// its script (Tamil ை as ன, the anusvara ం as ౦, or with the prototype
// of one): prose escapes a mark placed after it, so that the mark a
// letter carries (ன்) never shows after the twin mark (ை்).
func markOfLetter(r rune) bool {
	markTwins.once.Do(loadMarkTwins)
	return markTwins.ofLetter[r]
}

// unreadable reports a character whose fold is spelled by three or more
// characters that could be shown: prose escapes it.
func unreadable(r rune) bool {
	twinData.once.Do(loadTwins)
	return twinData.unreadable[r]
}

// phonetic reports the Latin letters of the phonetic alphabets and the
// later Latin extensions (small capitals, IPA letters such as ɑ, ɸ and
// ɩ, medievalist letters): drawn like letters of Greek, Cyrillic and
// ASCII, and rare in ordinary text. Prose escapes them, so they are no
// twin that could make a Greek or Cyrillic word whole-script
// confusable.
func phonetic(r rune, info charclass.Info) bool {
	if info.Script != "Latin" {
		return false
	}
	return r >= 0x0250 && r <= 0x02af || r >= 0x1d00 && r <= 0x1dbf || r >= 0xa720 && r <= 0xa7ff || r >= 0xab30 && r <= 0xab6f ||
		LatinLike(r)
}
