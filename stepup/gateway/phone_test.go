package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/browsertest"
)

// splitTextJS returns the text of every address, URL or id on the page
// (a string value without a space, a host, a hash, an amount) whose
// characters do not all lie on one line, measured with a Range over each
// character of its text.
const splitTextJS = `(() => {
  const out = [];
  const els = [...document.querySelectorAll('.asu-word, .asu-host, .asu-hash, .asu-number, .asu-argval i')];
  for (const e of els) {
    const tops = new Set();
    const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (let i = 0; i < n.length; i++) {
        const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
        for (const b of r.getClientRects()) { if (b.width > 0) tops.add(Math.round(b.top)); }
      }
    }
    if (tops.size > 1) out.push(e.textContent);
  }
  return out;
})()`

// layoutJS measures the decision area: whether the card's summary is the
// last thing above the buttons, and each button's width (as a share of
// its section's content) and height.
const layoutJS = `(() => {
  const acts = document.querySelector('.asu-actions'), sum = document.querySelector('.asu-decide .asu-summary');
  const sec = document.querySelector('.asu-decide'), cs = getComputedStyle(sec);
  const inner = sec.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const buttons = [...acts.querySelectorAll('button')].map(b => { const r = b.getBoundingClientRect(); return [r.width / inner, r.height]; });
  return {
    summaryRightAbove: !!sum && acts.previousElementSibling === sum && sum.getBoundingClientRect().bottom <= acts.getBoundingClientRect().top + 1,
    summaryText: sum ? sum.textContent : "",
    buttons: buttons,
  };
})()`

type pageLayout struct {
	SummaryRightAbove bool        `json:"summaryRightAbove"`
	SummaryText       string      `json:"summaryText"`
	Buttons           [][]float64 `json:"buttons"`
}

// phoneCard is a card whose recipient is a long address naming a trusted
// domain inside another, with an amount: what a phone must show whole.
func phoneCard(t *testing.T) *card.Card {
	args, err := json.Marshal(map[string]any{
		"to":      "finance.dept.team@example.com.evil.net",
		"cc":      []string{"accounts.payable.department@subsidiary.example.org"},
		"link":    "https://files.example.com/quarterly/reports/2026/q3/summary-final-v2.pdf",
		"amount":  1200,
		"subject": "Q3 payment, as agreed on the call",
	})
	require.NoError(t, err)
	c, err := card.Render(canon.Effect{Tool: "send_payment", Args: args, Task: "t-1", PolicyVersion: "1",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Audience: "payments"}, card.Context{
		Title: "Send payment", Class: card.ClassIrreversible, Trusted: []string{"example.com"},
		Hints:     card.Hints{Recipient: "to", Amount: "amount", FixedCurrency: "EUR"},
		Rationale: "Safe to approve: the finance team asked for it.",
	})
	require.NoError(t, err)
	return c
}

// TestApprovalPageOnAPhone renders the approval page at 390 and 1280 CSS
// pixels in Chromium and measures, in the browser's own layout, that no
// address, URL or id is split across lines, that the card's trusted
// summary (where it goes, how much, how many warnings) is the last thing
// right above the buttons, not the agent's text, and that on a phone the
// buttons are full width and at least 48 px tall. Screenshots of both
// widths are written for a person to look at.
func TestApprovalPageOnAPhone(t *testing.T) {
	for _, width := range []int{390, 1280} {
		t.Run(strconv.Itoa(width)+"px", func(t *testing.T) {
			bctx := browsertest.Start(t, "the approval page layout test", width, 900)
			dir := browsertest.Artifacts(t)
			c := phoneCard(t)
			var page bytes.Buffer
			require.NoError(t, pages.ExecuteTemplate(&page, "approve", approvePage{Title: "Approve: send_payment", ID: "tk-1",
				Origin: "http://localhost", Expires: "in 10 minutes", Card: c.HTML(), Summary: c.SummaryHTML(),
				Approvers: []string{"user:dana"}, ApproveOptions: "{}", DenyOptions: "{}", View: "v"}))
			root := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(root, "static"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "static", "site.css"), siteCSS(), 0o644))
			html := strings.ReplaceAll(page.String(), `href="/static/site.css"`, `href="static/site.css"`)
			html = strings.ReplaceAll(html, `<script src="/static/`, `<script data-off="`)
			file := filepath.Join(root, "approve.html")
			require.NoError(t, os.WriteFile(file, []byte(html), 0o644))

			ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
			defer cancel()
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.ID("asu-approve"))))
			split, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](splitTextJS))
			require.NoError(t, err)
			assert.Empty(t, split, "split across lines")
			lay, err := chromedp.Run(ctx, chromedp.Evaluate[pageLayout](layoutJS))
			require.NoError(t, err)
			assert.True(t, lay.SummaryRightAbove, "the card's summary is not right above the buttons")
			assert.Contains(t, lay.SummaryText, "evil.net")
			assert.Contains(t, lay.SummaryText, `1200 "EUR"`)
			assert.NotContains(t, lay.SummaryText, "Safe to approve")
			require.Len(t, lay.Buttons, 2)
			for _, b := range lay.Buttons {
				assert.GreaterOrEqual(t, b[1], 44.0, "button height")
				if width < 500 {
					assert.GreaterOrEqual(t, b[0], 0.98, "a button is not full width on a phone")
					assert.GreaterOrEqual(t, b[1], 48.0, "a button is under 48 px on a phone")
				}
			}
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
			require.NoError(t, err)
			assert.LessOrEqual(t, wide, 0, "the page scrolls sideways")
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			require.NoError(t, err)
			out := filepath.Join(dir, "approval-page-"+strings.TrimPrefix(t.Name(), "TestApprovalPageOnAPhone/")+".png")
			require.NoError(t, os.WriteFile(out, png, 0o644))
			t.Logf("screenshot written to %s", out)
		})
	}
}
