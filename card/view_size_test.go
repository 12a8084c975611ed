package card_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// denseItems are list items that make the most view per byte of effect:
// empty and nested containers, numbers and literals, keys, strings that
// are escaped, and values of many short hosts, each host with its own box
// of warnings (look-alikes, mixed scripts, unlisted suffixes, numbers).
var denseItems = []string{
	`[]`, `{}`, `[[]]`, `[[[]]]`, `{"":[]}`, `{"k":{"l":null}}`, `1`, `true`, `null`, `"x"`, `"\u0001"`, `"\u200b"`,
	`"<&>\""`, `{"\u200b":0}`, `"a@b.cc"`, `{"a@b.cc":1}`, `"http://a.b"`, `"x@\u0435xample.com"`,
	`"@a.de @b.de @c.de @d.de @e.de @f.de @g.de @h.de @i.de"`,
	`"@1.2 @1.3 @1.4 @1.5 @1.6 @1.7 @1.8 @1.9 @2.1"`,
	`"@\u0430.x @\u0431.x @\u0432.x @\u0433.x @\u0434.x @\u0435.x @\u0436.x @\u0437.x @\u0438.x"`,
	`"@\u0430a.x @\u0430b.x @\u0430c.x @\u0430d.x @\u0430e.x @\u0430f.x @\u0430g.x @\u0430h.x @\u0430i.x"`,
	`"@exampl.com @exampie.com @examplee.com @xample.com @exanple.com @exampl3.com @examp1e.com @exarnple.com"`,
}

// denseArgs builds arguments of about size bytes: a list of items drawn
// from denseItems, one item throughout (pick >= 0) or a random mix.
func denseArgs(r *rand.Rand, pick, size int) string {
	var b strings.Builder
	b.WriteString(`{"v":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		item := pick
		if item < 0 {
			item = r.IntN(len(denseItems))
		}
		b.WriteString(denseItems[item])
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestViewsWithinTheirMultiples: for every adversarial shape and every
// dense item, alone or mixed, at sizes past the budget's floor, both
// views are shown (not refused) and are at most their stated multiple of
// the effect: the HTML view card.HTMLPerSource times, the text view
// card.TextPerSource times. The shapes of small values stay well within
// (HTML at most 28 times, text at most 16).
func TestViewsWithinTheirMultiples(t *testing.T) {
	sizes := []int{16 << 10, 96 << 10}
	if testing.Short() || raceEnabled {
		sizes = sizes[:1]
	}
	ctx := injectivityContext()
	check := func(t *testing.T, args string, maxHTML, maxText int) {
		s, err := canon.Seal(effectWith(args))
		require.NoError(t, err)
		c, err := card.RenderSealed(s, ctx)
		require.NoError(t, err)
		html, text := string(c.HTML()), c.Text()
		require.NotContains(t, html, "too large to show")
		require.NotContains(t, text, "too large to show")
		assert.LessOrEqual(t, len(html), maxHTML*s.Len(), "HTML %.1f times the effect", float64(len(html))/float64(s.Len()))
		assert.LessOrEqual(t, len(text), maxText*s.Len(), "text %.1f times the effect", float64(len(text))/float64(s.Len()))
	}
	for _, size := range sizes {
		for _, shape := range shapes {
			t.Run(shape, func(t *testing.T) { check(t, shapeArgs(shape, size), maxHTMLPerEffect, maxTextPerEffect) })
		}
		r := rand.New(rand.NewPCG(22, uint64(size)))
		for pick := range denseItems {
			t.Run(fmt.Sprintf("item%d", pick), func(t *testing.T) {
				check(t, denseArgs(r, pick, size), card.HTMLPerSource, card.TextPerSource)
			})
		}
		for range 4 {
			t.Run("mix", func(t *testing.T) { check(t, denseArgs(r, -1, size), card.HTMLPerSource, card.TextPerSource) })
		}
	}
}
