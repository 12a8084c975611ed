package escape

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card/internal/charclass"
	"github.com/agentstepup/asu/card/internal/confusable"
)

// markLetterPairs returns, for every letter or digit UTS #39 draws as a
// mark of its script, that letter and each mark it is drawn as.
func markLetterPairs(t *testing.T) [][2]rune {
	t.Helper()
	markTwins.once.Do(loadMarkTwins)
	var pairs [][2]rune
	for l := range markTwins.letters {
		pl, _ := confusable.Lookup(l)
		for m := range markTwins.ofLetter {
			pm, _ := confusable.Lookup(m)
			if pm == pl || pm == string(l) {
				pairs = append(pairs, [2]rune{l, m})
			}
		}
	}
	return pairs
}

// scriptBases returns a letter of each script with no look-alike, and
// the marks of each script that have none either.
func scriptBases() (map[string]rune, map[string][]rune) {
	base, marks := map[string]rune{}, map[string][]rune{}
	for r := rune(0x80); r < 0x20000; r++ {
		info := charclass.Lookup(r)
		if info.Props&charclass.Letterlike == 0 || info.Props&charclass.Lookalike != 0 || info.Props&charclass.NotNFC != 0 {
			continue
		}
		if info.Props&charclass.Mark == 0 {
			if _, ok := base[info.Script]; !ok {
				base[info.Script] = r
			}
		} else if scriptMark(info) && len(marks[info.Script]) < 6 {
			marks[info.Script] = append(marks[info.Script], r)
		}
	}
	return base, marks
}

// TestMarkTwinsOfLetters: a letter or digit drawn as a mark of its
// script (Tamil ஈ as ா, ன as ை, Telugu ౦ as ం) never displays like
// that mark, put in the same place of any word of its script: at the
// start, between letters, at the end, and carrying another mark.
func TestMarkTwinsOfLetters(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	pairs := markLetterPairs(t)
	require.GreaterOrEqual(t, len(pairs), 4)
	base, marks := scriptBases()
	n := 0
	for _, p := range pairs {
		sc := charclass.Lookup(p[0]).Script
		b, ok := base[sc]
		if !ok {
			continue
		}
		ctx := []string{"%", string(b) + "%", string(b) + "%" + string(b), "%" + string(b), string(b) + string(b) + "%"}
		for _, m := range marks[sc] {
			ctx = append(ctx, string(b)+"%"+string(m), string(b)+"%"+string(m)+string(b))
		}
		for _, c := range ctx {
			x, y := strings.Replace(c, "%", string(p[0]), 1), strings.Replace(c, "%", string(p[1]), 1)
			dx, dy := e.Show(x).Text, e.Show(y).Text
			assert.NotEqual(t, shownFold(dx), shownFold(dy), "%+q and %+q display as %q / %q", x, y, dx, dy)
			n++
		}
	}
	assert.Greater(t, n, 50)
}

// TestMarkTwinsOfLettersCatchesNaive: the same pairs collide when each
// is shown as written, so the check above could fail.
func TestMarkTwinsOfLettersCatchesNaive(t *testing.T) {
	for _, p := range [][2]string{{"அம்மா", "அம்மஈ"}, {"சென்னை", "சென்னன"}, {"తెలంగాణ", "తెల౦గాణ"}, {"മലയാളം", "മലയാളഠ"}} {
		assert.Equal(t, shownFold(p[0]), shownFold(p[1]))
		e := Escaper{Quote: true, Prose: true}
		assert.NotEqual(t, shownFold(e.Show(p[0]).Text), shownFold(e.Show(p[1]).Text), "%q / %q", p[0], p[1])
	}
}

// TestMarkTwinOfItsPrototype: a mark drawn as its prototype, itself a
// mark of the script (Malayalam ൂ as ു), shows apart from it: of each
// class of marks one is shown.
func TestMarkTwinOfItsPrototype(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, p := range [][2]string{{"പുരം", "പൂരം"}, {"ז֖ז", "ז֭ז"}, {"ܐܼܐ", "ܐ݂ܐ"}} {
		assert.NotEqual(t, shownFold(e.Show(p[0]).Text), shownFold(e.Show(p[1]).Text), "%q / %q", p[0], p[1])
	}
	base, _ := scriptBases()
	n := 0
	for m := range markTwins.escaped {
		proto, _ := confusable.Lookup(m)
		b, ok := base[charclass.Lookup(m).Script]
		if !ok || proto == string(m) {
			continue
		}
		x, y := string(b)+string(m), string(b)+proto
		assert.NotEqual(t, shownFold(e.Show(x).Text), shownFold(e.Show(y).Text), "%+q / %+q", x, y)
		n++
	}
	assert.Greater(t, n, 3)
}

// TestTamilTextReadsAsWritten: everyday Tamil, full of the vowel signs
// ா and ை and of ன carrying the virama, reads as written.
func TestTamilTextReadsAsWritten(t *testing.T) {
	e := Escaper{Quote: true, Prose: true}
	for _, w := range []string{"நன்றி", "அம்மா", "சென்னை", "வணக்கம்", "தமிழ்நாடு", "அனைத்து", "பணம் அனுப்பப்பட்டது", "ஈசல்"} {
		got := e.Show(w).Text
		assert.NotContains(t, got, `\u{`, "%q shown as %q", w, got)
	}
}
