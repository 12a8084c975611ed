package escape

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/charclass"
	"github.com/agentstepup/asu/card/internal/confusable"
)

// livingWords are words of living languages written with letters that
// UTS #39 pairs with archaic, phonetic or notational ones, or with an
// ASCII digit: each reads as written.
var livingWords = []string{
	"Здравствуйте", "Заказ", "Звонок завтра", "Итого", "Зима", "завтра", "Ёлка", "Юрий",
	"Іван", "Їжак", "Ґанок", "Ιταλία", "Ιωάννης", "Αθήνα", "Θεσσαλονίκη", "Θέλω", "στο θέμα", "ΠΛΗΡΩΘΗΚΕ", "ευχαριστώ",
	"Өскемен", "Төлеген", "Đà Nẵng", "Phạm Văn Đồng", "ประเทศไทย", "ที่นี่", "Ísland", "Ïle", "Ìsola",
}

// TestLivingWordsReadAsWritten: no living word above is escaped or
// flagged because a twin nobody writes today looks like one of its
// letters.
func TestLivingWordsReadAsWritten(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, w := range livingWords {
		got := e.Show(w)
		assert.Equal(t, w, got.Text, "%q", w)
		assert.Empty(t, got.Flags, "%q", w)
	}
}

// archaicTwins returns, for every modern letter, its twins no living
// language writes that a word can hold.
func archaicTwins() map[rune][]rune {
	twinData.once.Do(loadTwins)
	out := map[rune][]rune{}
	for _, c := range twinData.classes {
		for _, m := range c.members {
			if !modern(m) || !wordTwin(m) {
				continue
			}
			for _, a := range c.members {
				if a != m && wordTwin(a) && !modern(a) {
					out[m] = append(out[m], a)
				}
			}
		}
	}
	return out
}

// TestArchaicLookalikesOfLivingWordsShowApart: every living word with
// one, two or all of its letters replaced by archaic twins (Ͷ for И, ᴦ
// for г, Cherokee Ᏼ for в, in every combination drawn) displays unlike
// the word: the word is read as written, so its look-alike is escaped.
func TestArchaicLookalikesOfLivingWordsShowApart(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	twins := archaicTwins()
	rng := rand.New(rand.NewPCG(4, 12))
	tried := 0
	for _, w := range append(livingWords, "Итого", "говорить", "Лондон", "привет", "погода", "οδηγός") {
		want := shownFold(e.Show(w).Text)
		rs := []rune(w)
		for range 200 {
			alt := append([]rune(nil), rs...)
			changed := false
			for i, r := range alt {
				if ts := twins[r]; len(ts) > 0 && rng.IntN(3) == 0 {
					alt[i], changed = ts[rng.IntN(len(ts))], true
				}
			}
			if !changed || !norm.NFC.IsNormalString(string(alt)) {
				continue
			}
			tried++
			got := e.Show(string(alt)).Text
			require.NotEqual(t, want, shownFold(got), "%q and %q display alike: %q", w, string(alt), got)
		}
	}
	assert.Greater(t, tried, 1000)
}

// TestArchaicTwinsCatchNaive: the modern rule bites. Counted among
// "Итого"'s twins, archaic Greek Ͷ and the musical notation's letters
// make the word whole-script confusable, and so escaped.
func TestArchaicTwinsCatchNaive(t *testing.T) {
	naive := true
	for _, r := range "Итого" {
		c := twinsOf(r)
		if c == nil {
			naive = false
			break
		}
		greek := false
		for _, m := range c.members {
			greek = greek || twinScript(m) == "Greek" && wordTwin(m)
		}
		naive = naive && greek
	}
	assert.True(t, naive, "every letter of Итого has a Greek twin when archaic ones count")
	assert.False(t, wholeScriptConfusable("Итого", "Cyrillic", false))
}

// TestDigitYieldsToItsScript: in a word of a script with a letter drawn
// as an ASCII digit (З as 3, Bengali ৪ as 8), the digit is escaped and
// the letter shown, across every word of the script tried.
func TestDigitYieldsToItsScript(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, w := range []string{"Здравствуйте", "Заказ", "Звонок", "Зима", "Зоя", "Зеленоград", "взять", "раз", "БАЗА", "ЗАКАЗ"} {
		for _, alt := range []string{
			strings.Replace(w, "З", "3", 1), strings.Replace(w, "з", "3", 1),
			strings.ReplaceAll(strings.ReplaceAll(w, "З", "3"), "з", "3"),
		} {
			if alt == w {
				continue
			}
			got, orig := e.Show(alt), e.Show(w)
			assert.NotEqual(t, shownFold(orig.Text), shownFold(got.Text), "%q vs %q", w, alt)
		}
	}
	for _, w := range []string{"Здравствуйте", "Звонок", "Зима", "Зеленоград"} {
		assert.Equal(t, w, e.Show(w).Text)
		alt := strings.Replace(w, "З", "3", 1)
		assert.Contains(t, e.Show(alt).Text, `\u{0033}`, "%q", alt)
	}
	// Where the word's script has no such letter, the digit stands.
	for _, s := range []string{"Q3", "3 дня", "в 3 часа", "Windows 10"} {
		assert.NotContains(t, e.Show(s).Text, `\u{`, "%q", s)
	}
}

// strokeCapitals are the capitals UTS #39 folds to l that are drawn as
// the capital I.
func strokeCapitals() []rune {
	var out []rune
	charclass.Each(charclass.Lookalike, func(r rune, info charclass.Info) {
		if sk, _ := confusable.Lookup(r); candidate(r, info) && unicode.IsUpper(r) && sk == "l" {
			out = append(out, r)
		}
	})
	return out
}

// capitalReader is what a reader takes from a display, a capital UTS
// #39 folds to l read as the capital I it is drawn as, whatever Fold
// does.
func capitalReader(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if sk, ok := confusable.Lookup(r); ok && r >= 0x80 && sk == "l" && unicode.IsUpper(r) {
			b.WriteString("I")
			continue
		}
		b.WriteString(shownFold(string(r)))
	}
	return norm.NFC.String(b.String())
}

// TestStrokeCapitalsWithMarksShowApart: a capital drawn as I (Greek Ι,
// Cyrillic І and Ӏ, Latin Ɩ) with any combining mark, composed or not,
// displays unlike Latin I with the same mark (Ὶ and Ì, Ї and Ï, Ῑ and
// Ī), alone, in a sentence and in a word.
func TestStrokeCapitalsWithMarksShowApart(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	caps := strokeCapitals()
	require.GreaterOrEqual(t, len(caps), 4)
	checked := 0
	for _, c := range caps {
		for mark := rune(0x300); mark <= 0x36f; mark++ {
			a, b := norm.NFC.String("I"+string(mark)), norm.NFC.String(string(c)+string(mark))
			for _, ctx := range []string{"%", "% am here", "x %", "%ταλία", "%жак", "ab%cd"} {
				sa, sb := strings.Replace(ctx, "%", a, 1), strings.Replace(ctx, "%", b, 1)
				checked++
				da, db := e.Show(sa).Text, e.Show(sb).Text
				assert.NotEqual(t, capitalReader(da), capitalReader(db), "%q and %q display as %q / %q", sa, sb, da, db)
			}
		}
	}
	assert.Greater(t, checked, 1000)
}

// strokeReader folds what a reader takes an ASCII digit or sign for
// beside letters of another script: | and 1 are l, 0 is O.
func strokeReader(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '|', '1':
			b.WriteString("l")
		case '0':
			b.WriteString("O")
		default:
			b.WriteString(shownFold(string(r)))
		}
	}
	return b.String()
}

// TestASCIIDrawnAsALetterBesideItsScript: an ASCII digit or sign that
// UTS #39 draws as a letter (| and 1 as Hebrew ו or Arabic ا, 0 as
// Cyrillic О or Greek Ο), put in place of that letter in words of its
// script, before, after and between letters, never displays like the
// word.
func TestASCIIDrawnAsALetterBesideItsScript(t *testing.T) {
	twinData.once.Do(loadTwins)
	e := Escaper{Quote: true, Prose: true}
	words := map[string][]string{
		"Hebrew": {"דוח", "שלום", "אבג"}, "Arabic": {"السلامة", "مرحبا", "كتاب"},
		"Cyrillic": {"поле", "ПОЛЕ", "дом"}, "Greek": {"ΟΔΟΣ", "καλό"}, "Armenian": {"Օր", "բառ"},
	}
	checked := 0
	for a, id := range twinData.asciiDrawn {
		for _, m := range twinData.classes[id].members {
			sc := twinScript(m)
			if !wordTwin(m) || !modern(m) || sc == "Latin" {
				continue
			}
			for _, w := range words[sc] {
				for _, pos := range []int{0, 1, 2} {
					rs := []rune(w)
					if pos >= len(rs) {
						continue
					}
					rs[pos] = m
					with := string(rs)
					rs[pos] = a
					ascii := string(rs)
					if !norm.NFC.IsNormalString(with) {
						continue
					}
					checked++
					dw, da := e.Show(with).Text, e.Show(ascii).Text
					assert.NotEqual(t, strokeReader(dw), strokeReader(da), "%q and %q display as %q / %q", with, ascii, dw, da)
				}
			}
		}
	}
	assert.Greater(t, checked, 30)
	// The reader bites: shown raw, | in a Hebrew word reads as ו.
	assert.Equal(t, strokeReader("דוח"), strokeReader("ד|ח"))
	// Away from such letters the ASCII stands.
	for _, s := range []string{"a|b", "x | y", "שלום | עולם", "السعر 100", "Q1"} {
		assert.NotContains(t, e.Show(s).Text, `\u{007C}`, "%q", s)
		assert.NotContains(t, e.Show(s).Text, `\u{0031}`, "%q", s)
	}
}

// TestNeighbourShapeDecidesCasedTwins: of θ and Θ, twins UTS #39 draws
// alike, the small letter shows among small letters and the capital
// among capitals and at the head of a sentence; the other is escaped in
// each place.
func TestNeighbourShapeDecidesCasedTwins(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, tc := range []struct{ shown, escaped string }{
		{"Αθήνα", "ΑΘήνα"}, {"ΑΘΗΝΩΝ", "ΑθΗΝΩΝ"}, {"ΠΛΗΡΩΘΗΚΕ", "ΠΛΗΡΩθΗΚΕ"}, {"Θέμα.", "θέμα."}, {"Είπε. Θέλω", "Είπε. θέλω"},
		{"στο θέμα", "στο Θέμα"}, {"«Θέμα»", "«θέμα»"},
	} {
		assert.Equal(t, tc.shown, e.Show(tc.shown).Text)
		assert.Contains(t, e.Show(tc.escaped).Text, `\u{`, "%q", tc.escaped)
	}
}

// TestPreferredTwinsOnePerClass: at most one member of a class of twins
// is the one its languages write far more often.
func TestPreferredTwinsOnePerClass(t *testing.T) {
	twinData.once.Do(loadTwins)
	for _, c := range twinData.classes {
		n := 0
		for _, m := range c.members {
			if preferredTwin(m) {
				n++
			}
		}
		assert.LessOrEqual(t, n, 1, fmt.Sprintf("class of %q", string(c.members)))
	}
}

// persoReader is what a reader takes from a display in Arabic script:
// yeh ی inside a word drawn as Arabic yeh ي, at its end as alef maksura
// ى; keheh ک as kaf ك wherever it stands (stricter than the eye, which
// tells them apart at a word's end); then shownFold.
func persoReader(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		inside := i+1 < len(rs) && unicode.Is(unicode.Arabic, rs[i+1]) && unicode.IsLetter(rs[i+1])
		switch {
		case (r == 'ی' || r == 'ي') && inside:
			b.WriteRune('ي')
		case r == 'ی' || r == 'ي' && !inside:
			b.WriteString(shownFold(string('ى')))
			if r == 'ي' {
				b.WriteString("..") // dots below: read apart at the end of a word
			}
		case r == 'ک':
			b.WriteString(shownFold("ك"))
		default:
			b.WriteString(shownFold(string(r)))
		}
	}
	return b.String()
}

// TestPersianTextReadsAsWritten: text written as Persian or Urdu is
// (holding پ, چ, ژ, گ, ٹ, ڈ or ڑ, and no ة) shows ی and ک as themselves;
// Arabic text, and Persian text without such a letter, shows their
// Arabic twins.
func TestPersianTextReadsAsWritten(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, s := range []string{"پرداخت شد", "خیلی ممنون، پول", "گزارش کتاب", "چای میل دارید؟", "پیام یک مشتری", "ڈاک کی تفصیل"} {
		assert.Equal(t, s, e.Show(s).Text)
	}
	for _, s := range []string{"على الطاولة", "كتاب", "مدرسة كبيرة", "مكتب البريد"} {
		assert.Equal(t, s, e.Show(s).Text)
	}
	assert.Contains(t, e.Show("پ مدرسة یک").Text, `\u{06CC}`, "ة marks the text Arabic")
	assert.Contains(t, e.Show("خیلی").Text, `\u{06CC}`, "no Persian letter: the Arabic twin is shown")
}

// TestPersianAndArabicTwinsShowApart: in Persian, Arabic and undecided
// text, every spelling of every word with ی, ى, ي, ک and ك swapped at
// any of their places displays unlike every other, to a reader who
// takes ی inside a word for ي and at its end for ى.
func TestPersianAndArabicTwinsShowApart(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	alts := map[rune][]rune{'ی': {'ی', 'ى', 'ي'}, 'ى': {'ی', 'ى', 'ي'}, 'ي': {'ی', 'ى', 'ي'}, 'ک': {'ک', 'ك'}, 'ك': {'ک', 'ك'}}
	rng := rand.New(rand.NewPCG(7, 1))
	checked := 0
	for _, base := range []string{"پیکی کیک", "گل یکی", "کیف", "بیک یکی", "مدرسة كبيرة يكي", "چ ی ک ي", "ٹیکی"} {
		seen := map[string]string{}
		rs := []rune(base)
		for range 400 {
			alt := append([]rune(nil), rs...)
			for i, r := range alt {
				if as := alts[r]; len(as) > 0 {
					alt[i] = as[rng.IntN(len(as))]
				}
			}
			s := string(alt)
			k := persoReader(e.Show(s).Text)
			if prev, ok := seen[k]; ok && prev != s {
				t.Errorf("%q and %q display alike: %q / %q", prev, s, e.Show(prev).Text, e.Show(s).Text)
			}
			seen[k] = s
			checked++
		}
	}
	assert.Greater(t, checked, 2000)
	// The reader bites: ي inside a word shown beside ی would read alike.
	assert.Equal(t, persoReader("پ بیت"), persoReader("پ بيت"))
}

// TestWordsHoldingArchaicLettersShowApart: Greek and Cyrillic words
// built from letters whose only twin in the other script is archaic (ψ
// and ѱ, ω and ꙍ, ν and ѵ, и and ͷ, г and ᴦ, ј and ϳ) and from shared
// look-alikes (А Α, В Β, о ο), every one of up to three letters and a
// random sample of four, display unlike each other when both hold an
// archaic letter, and when one does.
func TestWordsHoldingArchaicLettersShowApart(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	greek := []rune("ψΨωνϳͷͶᴦͿΑΒοϰ")
	cyrillic := []rune("ѱѰꙍѵјиИгЈАВок")
	alphabet := append(append([]rune(nil), greek...), cyrillic...)
	seen := map[string]string{}
	check := func(rs []rune) {
		s := string(rs)
		if !norm.NFC.IsNormalString(s) {
			return
		}
		for _, ctx := range []string{"%", "x %.", "%ος", "%ый"} {
			in := strings.Replace(ctx, "%", s, 1)
			k := ctx + "\x00" + shownFold(e.Show(in).Text)
			if prev, ok := seen[k]; ok && prev != in {
				require.Failf(t, "two words display alike", "%q and %q as %q", prev, in, e.Show(in).Text)
			}
			seen[k] = in
		}
	}
	for _, a := range alphabet {
		check([]rune{a})
		for _, b := range alphabet {
			check([]rune{a, b})
			for _, c := range alphabet {
				check([]rune{a, b, c})
			}
		}
	}
	rng := rand.New(rand.NewPCG(2, 71))
	for range 20000 {
		rs := make([]rune, 4)
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(rs)
	}
}

// TestDigitsYieldOnlyToLetters: a digit drawn as an ASCII digit (Oriya ୨
// as 9) is shown in a word of its script only when a letter makes the
// word that script's, never a mark alone (Oriya visarga ଃ is drawn as
// 8): for every such digit and every spacing mark of its script.
func TestDigitsYieldOnlyToLetters(t *testing.T) {
	twinData.once.Do(loadTwins)
	e := Escaper{Quote: true, Prose: true}
	marks := map[string][]rune{}
	charclass.Each(charclass.Mark, func(r rune, info charclass.Info) {
		if unicode.Is(unicode.Mc, r) {
			marks[info.Script] = append(marks[info.Script], r)
		}
	})
	checked := 0
	for _, c := range twinData.classes {
		if !c.digit {
			continue
		}
		for _, d := range c.members {
			if d < 0x80 || !modern(d) || !unicode.IsDigit(d) {
				continue
			}
			for _, m := range marks[twinScript(d)] {
				s := string(d) + string(m)
				if !norm.NFC.IsNormalString(s) {
					continue
				}
				checked++
				assert.Contains(t, e.Show(s).Text, fmt.Sprintf(`\u{%04X}`, d), "%q", s)
			}
		}
	}
	assert.Greater(t, checked, 10)
}

// markReader is what a reader takes from a display: a spacing mark UTS
// #39 draws as ASCII read as that ASCII, then shownFold.
func markReader(s string) string {
	var b strings.Builder
	for _, r := range s {
		if a := asciiMark(r); a != 0 {
			b.WriteRune(a)
			continue
		}
		b.WriteString(shownFold(string(r)))
	}
	return b.String()
}

// TestMarksDrawnAsASCIIShowApart: for every spacing mark UTS #39 draws
// as ASCII (visarga ः as a colon, Oriya ଃ as 8, anusvara ం as o), put
// after one, two or three letters of its script, before another letter
// or a space or at the end, alone, or after a digit of its script drawn
// as ASCII: the string with the mark and the one with the ASCII in its
// place never display alike to a reader who takes the mark for the
// ASCII; and the words of those scripts written with the mark read as
// written where no ASCII could stand.
func TestMarksDrawnAsASCIIShowApart(t *testing.T) {
	drawnAs.once.Do(loadDrawnAs)
	twinData.once.Do(loadTwins)
	e := Escaper{Quote: true, Prose: true}
	letters := map[string][]rune{}
	digits := map[string][]rune{}
	charclass.Each(charclass.Lookalike|charclass.Mark, func(r rune, info charclass.Info) {})
	for r := rune(0x900); r < 0xe00; r++ {
		sc := charclass.Lookup(r).Script
		switch {
		case unicode.IsLetter(r) && twinsOf(r) == nil && len(letters[sc]) < 3:
			letters[sc] = append(letters[sc], r)
		case unicode.IsDigit(r) && twinsOf(r) != nil:
			digits[sc] = append(digits[sc], r)
		}
	}
	checked := 0
	for m, a := range drawnAs.mark {
		sc := charclass.Lookup(m).Script
		ls := letters[sc]
		if len(ls) < 3 || !modern(m) {
			continue
		}
		l1, l2, l3 := string(ls[0]), string(ls[1]), string(ls[2])
		var shapes []string
		for _, pre := range []string{"", l1, l1 + l2, l1 + l2 + l3} {
			for _, post := range []string{"", l3, " " + l2, ". "} {
				shapes = append(shapes, pre+"%"+post)
			}
		}
		for _, d := range digits[sc] {
			shapes = append(shapes, string(d)+"%", string(d)+"% "+l1)
		}
		for _, shape := range shapes {
			with, ascii := strings.Replace(shape, "%", string(m), 1), strings.Replace(shape, "%", string(a), 1)
			if !norm.NFC.IsNormalString(with) {
				continue
			}
			checked++
			dw, da := e.Show(with).Text, e.Show(ascii).Text
			assert.NotEqual(t, markReader(dw), markReader(da), "%q and %q display as %q / %q", with, ascii, dw, da)
		}
	}
	assert.Greater(t, checked, 100)
	for _, w := range []string{"తెలంగాణ", "మంచి", "ಬೆಂಗಳೂರು", "മലയാളം", "दुःख", "ଅଃନ", "नाम: राम", "समय: 10 बजे"} {
		assert.Equal(t, w, e.Show(w).Text)
	}
	// The reader bites: shown raw, ଃ after an Oriya letter reads as 8.
	assert.Equal(t, markReader("ଅଃ"), markReader("ଅ8"))
}

// TestMarksDrawnAsASCIIInRunsShowApart: every string of up to four
// characters over letters, vowel signs, generic marks, digits and spaces
// of Devanagari and of Oriya, with the visarga or ଃ and the ASCII it is
// drawn as, displays unlike every other to a reader who takes the mark
// for the ASCII: doubled marks ("कःःक" and "क::क"), marks after a
// generic mark on the letter ("क\u0951ःख"), after digits and spaces.
func TestMarksDrawnAsASCIIInRunsShowApart(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, alphabet := range [][]rune{
		[]rune("कखुःः:1 \u0951"),
		[]rune("ଅଓିଃ8 \u0951\u0300"),
	} {
		seen := map[string]string{}
		var walk func(prefix []rune)
		walk = func(prefix []rune) {
			if len(prefix) > 0 {
				s := string(prefix)
				if norm.NFC.IsNormalString(s) {
					k := markReader(e.Show(s).Text)
					if prev, ok := seen[k]; ok && prev != s {
						require.Failf(t, "two strings display alike", "%q and %q as %q / %q", prev, s, e.Show(prev).Text, e.Show(s).Text)
					}
					seen[k] = s
				}
			}
			if len(prefix) == 4 {
				return
			}
			for _, r := range alphabet {
				walk(append(prefix, r))
			}
		}
		walk(nil)
		assert.Greater(t, len(seen), 1000)
	}
}

// TestArabicMarksEscaped: no mark of Arabic's own script is shown as
// itself on an Arabic letter: its dots and tone marks would put one
// letter's dots on another's skeleton ("مدرسه\u08eb" would read as
// "مدرسة", "بى\u08eeب" as "بيب").
func TestArabicMarksEscaped(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	n := 0
	charclass.Each(charclass.Mark, func(r rune, info charclass.Info) {
		if info.Script != "Arabic" {
			return
		}
		n++
		for _, s := range []string{"بب" + string(r) + "ب", "مدرسه" + string(r), "بى" + string(r) + "ب"} {
			if norm.NFC.IsNormalString(s) {
				assert.Contains(t, e.Show(s).Text, fmt.Sprintf(`\u{%04X}`, r), "%q", s)
			}
		}
	})
	assert.Greater(t, n, 50)
}
