package card_test

import (
	"bufio"
	"encoding/json"
	"html"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/card/internal/confusable"
)

// readLines returns the lines of a testdata file that are not comments.
func readLines(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// shownText is a string of the card JSON: its text and flags.
type shownText struct {
	Text  string   `json:"text"`
	Flags []string `json:"flags"`
}

// TestMultilingualReadsAsWritten: everyday text in French, German,
// Polish, Turkish, Czech, Danish, Portuguese, Spanish, Greek, Russian,
// Ukrainian, Arabic, Hebrew, Korean, Japanese, Chinese, Vietnamese,
// Finnish, Swedish and emoji, as an argument value, the agent's
// rationale, a label and a reason, is shown as written, flagged for
// nothing, in every view.
func TestMultilingualReadsAsWritten(t *testing.T) {
	lines := readLines(t, "multilingual.txt")
	require.Greater(t, len(lines), 35)
	for _, l := range lines {
		t.Run(l, func(t *testing.T) {
			args, err := json.Marshal(map[string]string{"subject": l})
			require.NoError(t, err)
			ctx := injectivityContext()
			ctx.Rationale = l
			ctx.Reasons = []string{l}
			ctx.Hints.Labels = map[string]string{"subject": l}
			c := mustRender(t, effectWith(string(args)), ctx)
			js, err := c.JSON()
			require.NoError(t, err)
			var m struct {
				Args []struct {
					Label shownText `json:"label"`
					Value shownText `json:"value"`
				} `json:"args"`
				Context struct {
					Reasons []shownText `json:"reasons"`
				} `json:"context"`
				Untrusted struct {
					Rationale shownText `json:"rationale"`
				} `json:"untrusted"`
			}
			require.NoError(t, json.Unmarshal(js, &m))
			require.Len(t, m.Args, 1)
			for what, s := range map[string]shownText{
				"value": m.Args[0].Value, "label": m.Args[0].Label, "reason": m.Context.Reasons[0], "rationale": m.Untrusted.Rationale,
			} {
				assert.Equal(t, l, s.Text, "%s is not shown as written", what)
				assert.Empty(t, s.Flags, "%s is flagged", what)
			}
			wide := c.TextWidth(1000)
			assert.Contains(t, wide, `"`+l+`"`)
			assert.NotContains(t, wide, "(!) contains")
			assert.Contains(t, html.UnescapeString(string(c.HTML())), l)
		})
	}
}

// TestMultilingualCorpusHasTeeth: the strict rule, which keys and
// identifiers keep, escapes most of the corpus; only prose reads it as
// written.
func TestMultilingualCorpusHasTeeth(t *testing.T) {
	escaped := 0
	for _, l := range readLines(t, "multilingual.txt") {
		e := effectWith(`{"subject":"x"}`)
		e.Task = l // an identifier: the strict rule
		c := mustRender(t, e, injectivityContext())
		if !strings.Contains(c.Text(), `task "`+l+`"`) {
			escaped++
		}
	}
	assert.Greater(t, escaped, 20)
}

// TestLookalikeCorpusWarns: every near-miss and look-alike of a trusted
// domain in the corpus is warned, and none is badged.
func TestLookalikeCorpusWarns(t *testing.T) {
	ctx := injectivityContext()
	ctx.Trusted = []string{"example.com", "paypal.com"}
	for _, l := range readLines(t, "lookalikes.txt") {
		args, err := json.Marshal(map[string]string{"to": l})
		require.NoError(t, err)
		c := mustRender(t, effectWith(string(args)), ctx)
		doms, _ := argDomains(t, c)
		require.NotEmpty(t, doms, l)
		warned := false
		for _, d := range doms {
			assert.False(t, d.Trusted, l)
			for _, w := range d.Warnings {
				switch w {
				case "near-miss", "lookalike", "lookalike-label", "mixed-script", "contains-trusted", "non-ascii-in-name":
					warned = true
				}
			}
		}
		assert.True(t, warned, "%s: %+v", l, doms)
		text, html, js := badged(t, c)
		assert.False(t, text || html || js, l)
	}
}

// reverseConfusables maps a prototype to the characters UTS #39 lists
// as confusable with it.
func reverseConfusables() map[string][]rune {
	out := map[string][]rune{}
	for i := range confusable.Len() {
		r, sk := confusable.Entry(i)
		out[sk] = append(out[sk], r)
	}
	return out
}

// multilingualPairs: each line of the multilingual corpus against itself
// with one character replaced by its prototype or by another character
// listed as confusable with it, and against its decomposed form: the
// text that now reads as written must still never look like a different
// text.
func multilingualPairs(t testing.TB) []corpusPair {
	rev := reverseConfusables()
	var out []corpusPair
	for li, l := range readLines(t, "multilingual.txt") {
		rs := []rune(l)
		add := func(b string) {
			if b != l && utf8.ValidString(b) {
				out = append(out, corpusPair{class: "multilingual", a: place(li%3, l), b: place(li%3, b)})
			}
		}
		add(norm.NFD.String(l))
		for i, r := range rs {
			sk := confusable.Skeleton(string(r))
			variants := append([]rune(nil), rev[sk]...)
			for _, v := range variants {
				if v != r {
					add(string(rs[:i]) + string(v) + string(rs[i+1:]))
				}
			}
			add(string(rs[:i]) + sk + string(rs[i+1:]))
		}
	}
	return out
}

// TestInjectivityMultilingual: the multilingual pairs render to cards
// that look different, after look-alikes are folded, in both views.
func TestInjectivityMultilingual(t *testing.T) {
	ctx := injectivityContext()
	pairs := multilingualPairs(t)
	require.Greater(t, len(pairs), 2000)
	step := 1
	if testing.Short() || raceEnabled {
		step = 7 // a deterministic seventh
	}
	rendered := 0
	for i := 0; i < len(pairs); i += step {
		p := pairs[i]
		ca, errA := card.Render(p.a, ctx)
		cb, errB := card.Render(p.b, ctx)
		if errA != nil || errB != nil {
			continue
		}
		rendered++
		if foldVisible(ca.Visible()) == foldVisible(cb.Visible()) || foldVisible(htmlVisible(ca)) == foldVisible(htmlVisible(cb)) {
			t.Errorf("two effects look the same:\n%s", ca.Visible())
		}
	}
	assert.Greater(t, rendered, len(pairs)/step*9/10)
}

// TestProseImitatingTrustedStaysStrict: ordinary text that could pass for
// a trusted domain's name is escaped by the strict rule, though each of
// its words is in one script: "раураж" (Cyrillic, with ж, so not
// whole-script confusable) reads as "paypa" when paypa.com is trusted.
// Without it, the same text reads as written.
func TestProseImitatingTrustedStaysStrict(t *testing.T) {
	const v = "\u0440\u0430\u0443\u0440\u0430\u0436 invoice"
	args, err := json.Marshal(map[string]string{"subject": v})
	require.NoError(t, err)
	ctx := injectivityContext()
	plain := mustRender(t, effectWith(string(args)), ctx)
	assert.Contains(t, plain.TextWidth(200), `"`+v+`"`, "no trusted paypal.com: prose")
	ctx.Trusted = []string{"example.com", "paypa.com"}
	c := mustRender(t, effectWith(string(args)), ctx)
	assert.NotContains(t, c.TextWidth(200), `"`+v+`"`)
	assert.Contains(t, c.TextWidth(200), `\u{0440}\u{0430}\u{0443}\u{0440}\u{0430}`)
}
