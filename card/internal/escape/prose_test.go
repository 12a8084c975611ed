package escape

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

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
