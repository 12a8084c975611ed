package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/internal/browsertest"
	"github.com/agentstepup/asu/stepup/gateway"
)

// someFigures are figures of a busy week: two classes, two approvers, one
// of them rubber-stamping.
func someFigures() figures.Report {
	rule := figures.DefaultRubberStampRule()
	rate := func(x float64) *float64 { return &x }
	took := func(median, p90 time.Duration) *figures.DecisionTime {
		return &figures.DecisionTime{MedianMillis: float64(median.Milliseconds()), P90Millis: p90.Milliseconds()}
	}
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	return figures.Report{
		Window:   &figures.Window{From: start.UnixMilli(), To: start.Add(6 * 24 * time.Hour).UnixMilli(), Records: 120},
		PeakHour: &figures.Peak{Start: start.Add(time.Hour).UnixMilli(), Approvals: 27},
		Overall: figures.Class{Asked: 40, Lapsed: 6, Reviewers: 2,
			Decisions: figures.Decisions{Approvals: 30, Denials: 4, ApprovalRate: rate(30.0 / 34), Time: took(4200*time.Millisecond, 41*time.Second)},
			Pace:      figures.Pace{ActiveMillis: (2 * time.Hour).Milliseconds(), ApprovalsPerActiveHour: rate(12.5), PeakHour: 27}},
		ByClass: map[string]figures.Class{
			"external": {Asked: 30, Lapsed: 3, Reviewers: 1,
				Decisions: figures.Decisions{Approvals: 26, Denials: 1, ApprovalRate: rate(26.0 / 27), Time: took(2*time.Second, 3*time.Second)},
				Pace:      figures.Pace{ActiveMillis: (50 * time.Minute).Milliseconds(), ApprovalsPerActiveHour: rate(30), PeakHour: 26}},
			"irreversible": {Asked: 10, Lapsed: 3, Reviewers: 2,
				Decisions: figures.Decisions{Approvals: 4, Denials: 3, ApprovalRate: rate(4.0 / 7), Time: took(38*time.Second, 95*time.Second)},
				Pace:      figures.Pace{ActiveMillis: (70 * time.Minute).Milliseconds(), ApprovalsPerActiveHour: rate(2.6), PeakHour: 2}},
		},
		ByApprover: map[string]figures.Approver{
			"user:dana": {Decisions: figures.Decisions{Approvals: 26, Denials: 1, ApprovalRate: rate(26.0 / 27),
				Time: took(2*time.Second, 3*time.Second), RubberStamp: true}, Pace: figures.Pace{PeakHour: 26}},
			"user:erin": {Decisions: figures.Decisions{Approvals: 4, Denials: 3, ApprovalRate: rate(4.0 / 7), Time: took(38*time.Second, 95*time.Second),
				Catch: &figures.CatchRate{Caught: 3, Missed: 1, Rate: 0.75, Low: 0.30, High: 0.95}},
				Pace: figures.Pace{ActiveMillis: (70 * time.Minute).Milliseconds(), ApprovalsPerActiveHour: rate(2.6), PeakHour: 2}},
		},
		Rule:     rule,
		Warnings: []string{"user:dana approves 96% within 2 s"},
	}
}

func figuresServer(t *testing.T, f figures.Report, opts ...gateway.FiguresOption) *httptest.Server {
	t.Helper()
	m, err := gateway.NewMetrics()
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	m.ServeFigures(func(context.Context) (figures.Report, error) { return f, nil }, opts...)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// TestFiguresPage: the page names its window and the peak hour, has a row
// per class (and all) and per approver, whose tables hold only columns
// that mean something for them (no requests beside an approver), flags
// the rubber stamp, and loads its own style sheet under the site's CSP.
func TestFiguresPage(t *testing.T) {
	srv := figuresServer(t, someFigures(), gateway.FiguresWindow(7*24*time.Hour))
	resp, page := get(t, srv.URL+gateway.FiguresPath)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, gateway.CSP, resp.Header.Get("Content-Security-Policy"))
	assert.Contains(t, page, `<link rel="stylesheet" href="/approvals.css">`)
	assert.NotContains(t, page, "<style")
	assert.NotContains(t, page, "<script")
	assert.Contains(t, page, "the last 7 days")
	assert.Contains(t, page, "<dt>busiest hour</dt><dd>27 <small>approvals in the hour from 2026-11-23 10:00 UTC</small></dd>")
	assert.Contains(t, page, "Window: 120 records from 2026-11-23 09:00 UTC to 2026-11-29 09:00 UTC.")
	assert.Contains(t, page, "<dt>median decision</dt><dd>4.2 s</dd>")
	assert.Contains(t, page, "user:dana approves 96% within 2 s")
	for _, row := range []string{">external</th>", ">irreversible</th>", ">all</th>", ">user:dana</th>", ">user:erin</th>"} {
		assert.Contains(t, page, row)
	}
	_, people, ok := strings.Cut(page, "By approver")
	require.True(t, ok)
	assert.NotContains(t, people, "asked</th>", "an approver's row has no asked column")
	assert.NotContains(t, people, `data-label="asked"`)
	assert.NotContains(t, people, `data-label="lapsed"`)
	assert.Contains(t, people, `class="asu-flagged"`)
	assert.Contains(t, people, `<td data-label="practice caught">3 of 4 (75%, 95%: 30 to 95%)</td>`)
	assert.Contains(t, people, `<td data-label="practice caught">none</td>`)

	resp, css := get(t, srv.URL+gateway.FiguresPath+".css")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/css; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, css, ".asu-table")
}

// TestFiguresPageWithNoDecisions: with nothing decided the page says so,
// never "0%" or "0s".
func TestFiguresPageWithNoDecisions(t *testing.T) {
	srv := figuresServer(t, figures.Report{Overall: figures.Class{Asked: 2, Lapsed: 2},
		ByClass: map[string]figures.Class{"external": {Asked: 2, Lapsed: 2}}})
	_, page := get(t, srv.URL+gateway.FiguresPath)
	assert.Contains(t, page, "No decisions yet.")
	assert.NotContains(t, page, ">0%<")
	assert.NotContains(t, page, ">0s<")
	assert.NotContains(t, page, ">0.0 s<")
	assert.Contains(t, page, `<td data-label="approval rate">no decisions yet</td>`)
	assert.Contains(t, page, `<td data-label="approvals per active hour">not measured</td>`)
}

// TestBrowserFiguresPage: the figures page at 1280 px and at 390 px, where
// each row reads as a block and nothing scrolls sideways; screenshots go
// to ASU_ARTIFACTS.
func TestBrowserFiguresPage(t *testing.T) {
	srv := figuresServer(t, someFigures(), gateway.FiguresWindow(7*24*time.Hour))
	dir := browsertest.Artifacts(t)
	for _, width := range []int{1280, 390} {
		bctx := browsertest.Start(t, "the figures page layout test", width, 900)
		ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+gateway.FiguresPath), chromedp.WaitVisible(chromedp.CSS(".asu-table"))))
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
		require.NoError(t, err)
		assert.LessOrEqual(t, wide, 0, "the figures page scrolls sideways at %d px", width)
		styled, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".asu-table")).borderRadius`))
		require.NoError(t, err)
		assert.Equal(t, "10px", styled, "the style sheet is applied")
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		out := filepath.Join(dir, "figures-"+itoa(width)+".png")
		require.NoError(t, os.WriteFile(out, png, 0o644))
		t.Logf("screenshot: %s", out)
		cancel()
	}
}

func itoa(n int) string {
	if n == 1280 {
		return "1280"
	}
	return "390"
}
