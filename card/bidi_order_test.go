package card_test

import (
	"context"
	"encoding/json"
	"html/template"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/browsertest"
)

// bidiTokens are what the values of TestBidiDisplayOrder are made of:
// Arabic and Hebrew words, ASCII and Arabic-Indic numbers, Latin words
// and punctuation.
var bidiTokens = []string{"ادفع", "واسترد", "مبلغ", "שלם", "החזר", "100", "200", "7", "١٠٠", "٢٠٠", "pay", "EUR", "-", ":", "(x)", "%"}

// visualOrderJS returns, for each card's first string value, its
// characters in the order the browser draws them: sorted by line, then
// from left to right, the marks left out.
const visualOrderJS = `[...document.querySelectorAll('.asu-card')].map(c => {
  const el = c.querySelector('.asu-val.asu-str .asu-t');
  if (!el) return '';
  const cells = [];
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    for (let i = 0; i < n.data.length; i++) {
      const ch = n.data[i];
      if (ch === '\u200e' || ch === ' ') continue;
      const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
      const b = r.getBoundingClientRect();
      cells.push([Math.round(b.top / 4), b.left, ch]);
    }
  }
  cells.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return cells.map(x => x[2]).join('');
})`

// visualOrders renders a card for each subject and returns what the
// browser draws of each, the HTML passed through edit first.
func visualOrders(t *testing.T, ctx context.Context, subjects []string, edit func(string) string) []string {
	t.Helper()
	var cards []template.HTML
	for _, s := range subjects {
		args, err := json.Marshal(map[string]string{"subject": s})
		require.NoError(t, err)
		cards = append(cards, template.HTML(edit(string(mustRender(t, effectWith(string(args)), injectivityContext()).HTML()))))
	}
	page := filepath.Join(t.TempDir(), "bidi.html")
	require.NoError(t, os.WriteFile(page, []byte(pageHTML(cards...)), 0o644))
	tctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(tctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("body")))
	got, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](visualOrderJS))
	require.NoError(t, err)
	require.Len(t, got, len(subjects))
	return got
}

// TestBidiDisplayOrder: values made of right-to-left words, numbers and
// left-to-right words, each with every rotation and some other orders of
// its tokens, are drawn by the browser in as many different orders as
// there are different values: no two are drawn alike. Without the view's
// left-to-right marks, "ادفع 100 واسترد 200" and its rotation "200 ادفع
// 100 واسترد" are drawn alike.
func TestBidiDisplayOrder(t *testing.T) {
	ctx := browsertest.Start(t, "the card's right-to-left display order test", 900, 1200)
	naive := visualOrders(t, ctx, []string{"ادفع 100 واسترد 200", "200 ادفع 100 واسترد"},
		func(h string) string { return strings.ReplaceAll(h, "\u200e", "") })
	require.Equal(t, naive[0], naive[1], "the check would not catch the collision it guards against")

	rng := rand.New(rand.NewPCG(8, 2))
	seen := map[string]bool{}
	var subjects []string
	add := func(tokens []string) {
		s := strings.Join(tokens, " ")
		if !seen[s] {
			seen[s] = true
			subjects = append(subjects, s)
		}
	}
	for range 60 {
		tokens := make([]string, 2+rng.IntN(4))
		for i := range tokens {
			tokens[i] = bidiTokens[rng.IntN(len(bidiTokens))]
		}
		for r := range tokens {
			add(append(append([]string{}, tokens[r:]...), tokens[:r]...))
		}
		rng.Shuffle(len(tokens), func(i, j int) { tokens[i], tokens[j] = tokens[j], tokens[i] })
		add(tokens)
	}
	drawn := visualOrders(t, ctx, subjects, func(h string) string { return h })
	by := map[string]string{}
	for i, d := range drawn {
		if other, ok := by[d]; ok {
			t.Errorf("%q and %q are drawn alike: %q", other, subjects[i], d)
		}
		by[d] = subjects[i]
	}
	t.Logf("%d values, %d drawn orders", len(subjects), len(by))
}
