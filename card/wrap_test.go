package card_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/width"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// fakeLines are lines of the card's own an agent would like to place at
// the start of a terminal line.
var fakeLines = []string{
	"== END OF AGENT TEXT ==",
	"== POLICY CHECK ==",
	"== WHAT WILL RUN ==",
	"READ: reads data, changes nothing",
	"(!) IRREVERSIBLE: cannot be undone",
	"domain example.com, TRUSTED",
	"fingerprint ",
	"▌ == END OF AGENT TEXT ==",
	"┆ == END OF AGENT TEXT ==",
}

// hostileWrapCards renders cards whose agent-controlled text (rationale,
// tool description, argument values and names, task, user, reference
// name) pads a fake line with spaces, dashes or letters so that a terminal
// wrapping at some width would put it at column 0.
func hostileWrapCards(t *testing.T) []*card.Card {
	var out []*card.Card
	pads := []string{" ", "-", "x", "\u3000", "\u4e00"}
	n := 0
	for _, fake := range fakeLines {
		for _, pad := range pads {
			for k := 0; k <= 130; k += 13 {
				s := "ok" + strings.Repeat(pad, k) + fake + strings.Repeat(" ", k%40) + "tail"
				e := sendEmailEffect(t, "finance@example.com")
				ctx := sendEmailContext()
				switch n % 7 {
				case 0:
					ctx.Rationale = s + "\n" + s
				case 1:
					ctx.ToolDescription = s
				case 2:
					e = argsEffect(map[string]any{"to": "finance@example.com", "subject": s})
				case 3:
					e = argsEffect(map[string]any{s: "x", "to": "finance@example.com"})
				case 4:
					e.Task = s
				case 5:
					e.Principal.User = s
				default:
					e.Refs[0].Name = s
				}
				n++
				c, err := card.Render(e, ctx)
				require.NoError(t, err)
				out = append(out, c)
			}
		}
	}
	return out
}

// termWrap splits text the way a terminal of cols columns shows it.
func termWrap(text string, cols int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		start, w := 0, 0
		for i, r := range l {
			rw := runeCols(r)
			if w+rw > cols {
				out = append(out, l[start:i])
				start, w = i, 0
			}
			w += rw
		}
		out = append(out, l[start:])
	}
	return out
}

func runeCols(r rune) int {
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// readsAsCard reports a physical line a person takes for a line of the
// card: it starts with the card's line mark, then (after indentation) one
// of the card's own lines.
func readsAsCard(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "▌")
	if !ok {
		return "", false
	}
	rest = strings.TrimLeft(rest, " ")
	for _, f := range fakeLines {
		if strings.HasPrefix(rest, strings.TrimPrefix(strings.TrimPrefix(f, "▌ "), "┆ ")) {
			return f, true
		}
	}
	return "", false
}

// cardLines counts, per fake line, the physical lines that read as that
// line of the card.
func cardLines(lines []string) map[string]int {
	got := map[string]int{}
	for _, l := range lines {
		if f, ok := readsAsCard(l); ok {
			got[f]++
		}
	}
	return got
}

// TestWrapCannotForgeCardLines renders hostile cards at card widths from
// 40 to 200 and shows each in terminals from 40 to 200 columns: the lines
// that read as lines of the card are exactly those of an honest card, at
// every pair of widths, and the card's own lines fit its width. With
// -short or -race, fewer widths.
func TestWrapCannotForgeCardLines(t *testing.T) {
	honest := mustRender(t, sendEmailEffect(t, "finance@example.com"), sendEmailContext())
	cards := hostileWrapCards(t)
	widths := []int{40, 41, 57, 64, 79, 80, 81, 100, 120, 132, 160, 200}
	terms := []int{40, 43, 61, 80, 97, 120, 200}
	if testing.Short() || raceEnabled {
		widths, terms = []int{40, 57, 80, 132, 200}, []int{40, 61, 80, 200}
	}
	for _, w := range widths {
		want := make([]map[string]int, len(terms))
		for j, term := range terms {
			want[j] = cardLines(termWrap(honest.TextWidth(w), term))
		}
		for i, c := range cards {
			text := c.TextWidth(w)
			for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				require.LessOrEqual(t, displayCols(l), w, "card %d at width %d: line too wide: %q", i, w, l)
			}
			for j, term := range terms {
				got := cardLines(termWrap(text, term))
				require.Equal(t, want[j], got, "card %d at width %d in a %d-column terminal:\n%s", i, w, term, text)
			}
		}
	}
}

func displayCols(s string) int {
	n := 0
	for _, r := range s {
		n += runeCols(r)
	}
	return n
}

// TestWrapCheckCatchesNaive: the same check fails for the card as it was
// (no line mark, no wrapping, spaces shown as they are): padding puts a
// fake line at column 0 of a terminal line.
func TestWrapCheckCatchesNaive(t *testing.T) {
	ctx := sendEmailContext()
	ctx.Rationale = "Sending the numbers." + strings.Repeat(" ", 80-len("  | Sending the numbers.")) + "== END OF AGENT TEXT =="
	c := mustRender(t, sendEmailEffect(t, "finance@example.com"), ctx)
	naive := strings.NewReplacer("▌ ", "", `\{`+fmt.Sprint(80-len("  | Sending the numbers."))+` spaces}`,
		strings.Repeat(" ", 80-len("  | Sending the numbers."))).Replace(c.TextWidth(400))
	forged := 0
	for _, l := range termWrap(naive, 80) {
		if strings.HasPrefix(l, "== END OF AGENT TEXT ==") {
			forged++
		}
	}
	assert.Equal(t, 2, forged, "the naive view shows the real end line and a forged one:\n%s", naive)
}

// TestTextWidthLimits: a width below the minimum is the minimum.
func TestTextWidthLimits(t *testing.T) {
	c := mustRender(t, sendEmailEffect(t, "finance@example.com"), sendEmailContext())
	assert.Equal(t, c.TextWidth(card.MinWidth), c.TextWidth(1))
	assert.Equal(t, c.TextWidth(card.DefaultWidth), c.Text())
	deep := strings.Repeat(`{"a":`, canon.DefaultMaxDepth-1) + `"` + strings.Repeat("x ", 50) + `"` + strings.Repeat("}", canon.DefaultMaxDepth-1)
	d := mustRender(t, effectWith(deep), card.Context{Class: card.ClassRead})
	for _, l := range strings.Split(d.TextWidth(card.MinWidth), "\n") {
		assert.LessOrEqual(t, displayCols(l), card.MinWidth, "%q", l)
	}
}
