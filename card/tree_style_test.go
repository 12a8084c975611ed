package card_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/browsertest"
)

// treeStyleJS compares, in the browser's own style computation, every
// element of the short markup of lists and objects (a key as <b>, a
// number, bool or null as <i>, a type note as <small>) with the classed
// markup it replaced, a reference element set beside it, so in the same
// place and inheriting the same: a key's text with <span
// class="asu-key"><span class="asu-t">, a value with <span class="asu-val
// asu-number">, a note with <span class="asu-type">. It returns each
// property that differs, with the element's text, and the number of
// elements compared.
const treeStyleJS = `(() => {
  const props = ['font-family', 'font-size', 'font-weight', 'font-style', 'line-height', 'color',
    'background-color', 'white-space', 'overflow-wrap', 'word-break', 'hyphens', 'unicode-bidi',
    'display', 'padding-top', 'padding-right', 'padding-bottom', 'padding-left', 'border-top-left-radius',
    'text-decoration-line', 'vertical-align', 'letter-spacing'];
  const refs = {B: '<span class="asu-key"><span class="asu-t">x</span></span>',
    I: '<span class="asu-val asu-number">x</span>', SMALL: '<span class="asu-type">x</span>'};
  const out = [];
  let compared = 0;
  for (const e of document.querySelectorAll('.asu-argval b, .asu-argval i, .asu-argval small')) {
    const holder = document.createElement('span');
    holder.innerHTML = refs[e.tagName];
    e.after(holder);
    let ref = holder.firstChild;
    if (e.tagName === 'B') { ref = ref.firstChild; }
    // The reference is read as if it stood where e stands: its holder
    // adds nothing (display: contents).
    holder.style.display = 'contents';
    const got = getComputedStyle(e), want = getComputedStyle(ref);
    for (const p of props) {
      if (got.getPropertyValue(p) !== want.getPropertyValue(p)) {
        out.push(e.tagName + ' ' + JSON.stringify(e.textContent) + ' ' + p + ': ' +
          got.getPropertyValue(p) + ' instead of ' + want.getPropertyValue(p));
      }
    }
    holder.remove();
    compared++;
  }
  return {differ: out, compared: compared};
})()`

// TestTreeMarkupStyledAsBefore: the short markup of list items and
// members is drawn as the classed markup it replaced, property by
// property, at desktop and phone width, in an ordinary argument and in a
// recipient's (whose values are drawn larger), for keys of both kinds,
// every kind of leaf, empty containers and nesting.
func TestTreeMarkupStyledAsBefore(t *testing.T) {
	for _, width := range []int{900, 390} {
		t.Run(strconv.Itoa(width), func(t *testing.T) { treeStyledAsBefore(t, width) })
	}
}

func treeStyledAsBefore(t *testing.T, width int) {
	{
		ctx := browsertest.Start(t, "the tree markup style test", width, 1200)
		c := mustRender(t, effectWith(`{"to":["finance@example.com",{"n":1,"ok":true}],`+
			`"v":[1,true,null,[],{},{"k":{"l":null,"m":-2.5e3}},"x y",{"a b":[[1]]},{"\u00e9t\u00e9":false}]}`), injectivityContext())
		page := filepath.Join(t.TempDir(), "card.html")
		require.NoError(t, os.WriteFile(page, []byte(pageHTML(c.HTML())), 0o644))
		tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		require.NoError(t, chromedp.Do(tctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("footer")))
		type result struct {
			Differ   []string `json:"differ"`
			Compared int      `json:"compared"`
		}
		got, err := chromedp.Run(tctx, chromedp.Evaluate[result](treeStyleJS))
		cancel()
		require.NoError(t, err)
		assert.Empty(t, got.Differ, "at %d px", width)
		// 20 keys and indices, 11 leaves and empty containers, 11 type
		// notes: every one of them compared.
		assert.Equal(t, 42, got.Compared, "at %d px", width)
	}
}
