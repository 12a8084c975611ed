package escape

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/charclass"
	"github.com/agentstepup/asu/card/internal/confusable"
)

// shownFold is what a reader takes from a display: every character
// folded to its UTS #39 prototype, except those told apart.
func shownFold(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 || DrawnApart(r) || ReadApart(r) {
			b.WriteRune(r)
			continue
		}
		b.WriteString(Fold(string(r)))
	}
	return b.String()
}

// contexts are words of the scripts whose twins prose chooses among,
// with room (%) for one character.
var contexts = []string{
	"%", "ab%cd", "%ab", "ab%", "при%ет", "%ир", "καλ%μέρα", "%ος", "שלו%", "مر%با", "報%書", "デ%タ", "一%", "%个",
	"Q3%レポート", "iPhone%用", "a % b", "%.", "х%", "3%",
}

// TestProseTwins: for every class of twins, every two members put in the
// same place of every context display differently once look-alikes are
// folded: prose never shows two twins in one place.
func TestProseTwins(t *testing.T) {
	twinData.once.Do(loadTwins)
	e := Escaper{Quote: true, Prose: true}
	pairs := 0
	for _, c := range twinData.classes {
		var ms []string
		for _, m := range c.members {
			ms = append(ms, string(m))
		}
		if c.ascii {
			// the ASCII text folding to this class stands for it too
			ms = append(ms, Fold(string(c.members[0])))
		}
		for i, a := range ms {
			for _, b := range ms[i+1:] {
				for _, ctx := range contexts {
					sa, sb := strings.Replace(ctx, "%", a, 1), strings.Replace(ctx, "%", b, 1)
					if sa == sb || !norm.NFC.IsNormalString(sa) || !norm.NFC.IsNormalString(sb) {
						continue
					}
					pairs++
					da, db := e.Show(sa).Text, e.Show(sb).Text
					if shownFold(da) == shownFold(db) {
						t.Errorf("%q and %q both display as %q / %q", sa, sb, da, db)
					}
				}
			}
		}
	}
	assert.Greater(t, pairs, 50000)
}

// TestProseTwinsCatchesNaive: the same check fails a prose rule that
// shows every letter of a one-script word as itself.
func TestProseTwinsCatchesNaive(t *testing.T) {
	collide := 0
	for _, pair := range [][2]string{{"при\u0432ет", "при\u0299ет"}, {"p\u0430y", "pay"}, {"\u0441\u043e\u0440", "cop"}} {
		if shownFold(pair[0]) == shownFold(pair[1]) {
			collide++
		}
	}
	assert.Equal(t, 3, collide)
}

// TestProseSpelledTwins: a run of two characters whose folds spell the
// fold of one character (ɮ is l and ʒ) never displays like that one.
func TestProseSpelledTwins(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	twinData.once.Do(loadTwins)
	checked := 0
	for i := range confusable.Len() {
		r, sk := confusable.Entry(i)
		if r < 0x80 || utf8.RuneCountInString(sk) != 2 {
			continue
		}
		for _, ctx := range []string{"ab%cd", "при%ет", "%", "مر%با"} {
			sa, sb := strings.Replace(ctx, "%", string(r), 1), strings.Replace(ctx, "%", sk, 1)
			if !norm.NFC.IsNormalString(sa) || !norm.NFC.IsNormalString(sb) {
				continue
			}
			checked++
			assert.NotEqual(t, shownFold(e.Show(sa).Text), shownFold(e.Show(sb).Text), "%q vs %q", sa, sb)
		}
	}
	assert.Greater(t, checked, 500)
}

// TestProseRandomInjective: random strings over letters of many scripts
// and their twins: two that differ never display alike after folding.
func TestProseRandomInjective(t *testing.T) {
	alphabet := []rune("aeopcxyilbmnrt10 .,'’-–—аеорсхуіїбвмнт αεορτνυισς שוי ىيهع 一ーニ二ロ口工エ 분기 ɑɩɮʒ€×•·")
	e := Escaper{Quote: true, Prose: true}
	rng := rand.New(rand.NewPCG(22, 39))
	seen := map[string]string{}
	for range 200000 {
		rs := make([]rune, 1+rng.IntN(5))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(rs)
		if !norm.NFC.IsNormalString(s) {
			continue
		}
		k := shownFold(e.Show(s).Text)
		if prev, ok := seen[k]; ok && prev != s {
			require.Failf(t, "two strings display alike", "%q and %q as %q", prev, s, k)
		}
		seen[k] = s
	}
}

// TestReadApartOnlyInItsWords: a letter its readers tell from its twin
// in every word of their language (ReadApart) is shown as itself in such
// a word, and escaped wherever no other letter of its script stands
// beside it: alone, among digits, beside punctuation, where its twin
// would read the same (б in 1б0 is a 6), and beside only letters read
// apart (3б5б is 3656).
func TestReadApartOnlyInItsWords(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	words := map[rune][]string{
		'ı': {"kılıç", "ılık"}, 'σ': {"σοφία", "ασ"}, 'ς': {"λόγος"}, 'י': {"ילד", "שלום ילד"},
		'æ': {"bær", "æble"}, 'Æ': {"Ærø"}, 'œ': {"cœur", "sœur"}, 'Œ': {"Œuvre"}, 'б': {"бюджет", "Об"},
		'ي': {"في", "يوم"}, 'ן': {"החשבון", "אמן"}, 'ค': {"ขอบคุณ"}, 'ด': {"สวัสดี"}, 'ต': {"ตลาด"},
		'ม': {"ขอบคุณมาก"}, 'ฆ': {"ระฆัง"},
	}
	apart := []string{"%", "1%0", "%7", "12%", "Room %", "% 12", "(%)", "%.", "-%-", "% %", "3%5%"}
	for r, ws := range words {
		require.True(t, ReadApart(r), "%c", r)
		for _, w := range ws {
			got := e.Show(w).Text
			assert.True(t, strings.ContainsRune(got, r), "%q in its word shows as %q", w, got)
		}
		for _, ctx := range apart {
			s := strings.ReplaceAll(ctx, "%", string(r))
			got := e.Show(s).Text
			assert.False(t, strings.ContainsRune(got, r), "%q, no word of its script: shown as %q", s, got)
		}
	}
}

// TestScriptPunctuationOnlyInItsScript: the punctuation of one script's
// writing that the card's font draws apart from its ASCII twin (Arabic
// and Hebrew marks, the ideographic ones) is shown as itself in text of
// that script, and escaped in text without a letter of it, where a
// reader takes it for its twin (x ۔ y for x - y). One without a twin is
// shown wherever it stands.
func TestScriptPunctuationOnlyInItsScript(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	own := map[string][]string{
		"Arabic":     {"مرحبا% كيف", "كيف حالك%"},
		"Hebrew":     {"צה%ל", "ג%"},
		"Han":        {"日本語%", "%テスト%", "한국어%"},
		"Devanagari": {"नमस्ते%", "बिल संलग्न है%"},
	}
	foreign := []string{"a%b", "x % y", "1%0", "%", "Q3 % report", "привет%", "%%"}
	n := 0
	for r := rune(0x80); r <= 0xffff; r++ {
		sc := drawnScript(r)
		if sc == "" {
			continue
		}
		n++
		require.True(t, DrawnApart(r), "%c", r)
		for _, ctx := range own[sc] {
			s := strings.ReplaceAll(ctx, "%", string(r))
			if r == '٪' {
				continue // the Arabic percent sign is escaped in every text
			}
			got := e.Show(s).Text
			assert.True(t, strings.ContainsRune(got, r), "%q, text of its script: shown as %q", s, got)
		}
		if twinsOf(r) == nil {
			continue // no twin to take it for: shown wherever it stands
		}
		for _, ctx := range foreign {
			s := strings.ReplaceAll(ctx, "%", string(r))
			got := e.Show(s).Text
			assert.False(t, strings.ContainsRune(got, r), "%q, no letter of its script: shown as %q", s, got)
		}
	}
	assert.Equal(t, 30, n)
}

// TestLowQuoteIsAComma: the low single quote ‚ (U+201A), which the card's
// font draws as a comma point for point, is escaped in every text, so
// 1‚000 never shows as 1,000.
func TestLowQuoteIsAComma(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, ctx := range []string{"1%000", "pay 1%000 now", "ab%cd", "%", "‚Hallo‘ %", "при%ет", "日本%"} {
		s := strings.ReplaceAll(ctx, "%", "\u201a")
		got := e.Show(s).Text
		assert.NotContains(t, got, "\u201a", "%q shown as %q", s, got)
		assert.NotEqual(t, e.Show(strings.ReplaceAll(ctx, "%", ",")).Text, got)
	}
}

// TestFoldMarksEscapedWhereTheySpell: a mark that spells, with the text
// around it, the fold of another letter (र्इ for ई, অা for আ) is escaped
// there, so the spelling never displays as the letter, in every context;
// elsewhere it is the mark its letter takes, and words of the languages
// that write it read as written.
func TestFoldMarksEscapedWhereTheySpell(t *testing.T) {
	twinData.once.Do(loadTwins)
	e := Escaper{Quote: true, Prose: true}
	pairs := 0
	for m, folds := range twinData.markFolds {
		for _, k := range folds {
			require.Contains(t, k, string(m))
			for _, ctx := range contexts {
				spelled := strings.Replace(ctx, "%", k, 1)
				got := e.Show(spelled).Text
				assert.NotContains(t, got, string(m), "%q spells a fold with %U shown: %q", spelled, m, got)
				pairs++
			}
		}
	}
	assert.Greater(t, pairs, 100)
	for _, w := range []string{"नमस्ते", "है", "हिन्दी", "मैं", "कृपया", "धन्यवाद", "आमार", "আমার", "নমস্কার", "நன்றி", "வணக்கம்"} {
		got := e.Show(w).Text
		assert.NotContains(t, got, `\u{`, "%q shown as %q", w, got)
	}
}

// TestMarkTwinsShowOne: of marks UTS #39 draws alike within one script
// (Hebrew holam, holam haser and the sin and shin dots), one is shown and
// the others escaped, so a letter bearing one never displays as the same
// letter bearing another.
func TestMarkTwinsShowOne(t *testing.T) {
	markTwins.once.Do(loadMarkTwins)
	e := Escaper{Quote: true, Prose: true}
	require.True(t, markTwin(0x05C2) && markTwin(0x05BA) && !markTwin(0x05B9))
	base := map[string]rune{}
	for r := rune(0x80); r < 0x20000 && len(base) < 200; r++ {
		if info := charclass.Lookup(r); info.Props&charclass.Letterlike != 0 && info.Props&charclass.Mark == 0 && info.Props&charclass.Lookalike == 0 {
			if _, ok := base[info.Script]; !ok {
				base[info.Script] = r
			}
		}
	}
	pairs := 0
	for m := range markTwins.escaped {
		sc := charclass.Lookup(m).Script
		b, ok := base[sc]
		if !ok {
			continue
		}
		p, _ := confusable.Lookup(m)
		for n := range markTwins.escaped {
			if q, _ := confusable.Lookup(n); q != p || n == m || charclass.Lookup(n).Script != sc {
				continue
			}
			x, y := string(b)+string(m), string(b)+string(n)
			assert.NotEqual(t, shownFold(e.Show(x).Text), shownFold(e.Show(y).Text), "%q and %q", x, y)
			pairs++
		}
		assert.NotContains(t, e.Show(string(b)+string(m)).Text, string(m))
	}
	assert.Greater(t, pairs, 2)
}

// TestEverydayWordsReadAsWritten: words of everyday Hebrew, Thai and
// Japanese, written with letters UTS #39 pairs with others of their own
// script, are shown as written.
func TestEverydayWordsReadAsWritten(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, w := range []string{"החשבון", "שלום", "אמן", "ขอบคุณมาก", "สวัสดี", "ตลาด", "ヘルプ", "ベッド", "ペン", "へや", "べんきょう"} {
		got := e.Show(w).Text
		assert.NotContains(t, got, `\u{`, "%q shown as %q", w, got)
	}
	// Kana twins still show one per place: katakana he in a hiragana word
	// is escaped, and hiragana he in a katakana one.
	assert.Contains(t, e.Show("ヘや").Text, `\u{`)
	assert.Contains(t, e.Show("へルプ").Text, `\u{`)
}
