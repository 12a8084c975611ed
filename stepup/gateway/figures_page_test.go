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

	"github.com/agentstepup/asu/internal/browsertest"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/gateway"
)

// someFigures are figures of a busy week: two classes, two approvers, one
// of them rubber-stamping.
func someFigures() receipt.ApprovalMetrics {
	rule := receipt.DefaultRubberStampRule()
	return receipt.ApprovalMetrics{
		Overall: receipt.ClassMetrics{Requests: 40, Approved: 30, Denied: 4, Expired: 6, ApprovalRate: 30.0 / 34,
			MedianDecision: 4200 * time.Millisecond, P90Decision: 41 * time.Second, Reviewers: 2,
			ApprovalsPerReviewerHour: 12.5, PeakReviewerHour: 27},
		ByClass: map[string]receipt.ClassMetrics{
			"external":     {Requests: 30, Approved: 26, Denied: 1, Expired: 3, ApprovalRate: 26.0 / 27, Reviewers: 1, PeakReviewerHour: 26},
			"irreversible": {Requests: 10, Approved: 4, Denied: 3, Expired: 3, ApprovalRate: 4.0 / 7, Reviewers: 2},
		},
		ByApprover: map[string]receipt.ClassMetrics{
			"user:dana": {Approved: 26, Denied: 1, ApprovalRate: 26.0 / 27, MedianDecision: 2 * time.Second, RubberStamp: true,
				PeakReviewerHour: 26},
			"user:erin": {Approved: 4, Denied: 3, ApprovalRate: 4.0 / 7},
		},
		Rule:     rule,
		Warnings: []string{"user:dana approves 96% within 2 s"},
	}
}

func figuresServer(t *testing.T, f receipt.ApprovalMetrics, opts ...gateway.FiguresOption) *httptest.Server {
	t.Helper()
	m, err := gateway.NewMetrics()
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	m.ServeFigures(func(context.Context) (receipt.ApprovalMetrics, error) { return f, nil }, opts...)
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
	assert.Contains(t, page, "<dt>peak hour</dt><dd>27 ")
	assert.Contains(t, page, "<dt>median decision</dt><dd>4.2 s</dd>")
	assert.Contains(t, page, "user:dana approves 96% within 2 s")
	for _, row := range []string{">external</th>", ">irreversible</th>", ">all</th>", ">user:dana</th>", ">user:erin</th>"} {
		assert.Contains(t, page, row)
	}
	_, people, ok := strings.Cut(page, "By approver")
	require.True(t, ok)
	assert.NotContains(t, people, "requests</th>", "an approver's row has no requests column")
	assert.NotContains(t, people, `data-label="requests"`)
	assert.Contains(t, people, `class="asu-flagged"`)

	resp, css := get(t, srv.URL+gateway.FiguresPath+".css")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/css; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, css, ".asu-table")
}

// TestFiguresPageWithNoDecisions: with nothing decided the page says so,
// never "0%" or "0s".
func TestFiguresPageWithNoDecisions(t *testing.T) {
	srv := figuresServer(t, receipt.ApprovalMetrics{Overall: receipt.ClassMetrics{Requests: 2, Expired: 2},
		ByClass: map[string]receipt.ClassMetrics{"external": {Requests: 2, Expired: 2}}})
	_, page := get(t, srv.URL+gateway.FiguresPath)
	assert.Contains(t, page, "No decisions yet.")
	assert.NotContains(t, page, ">0%<")
	assert.NotContains(t, page, ">0s<")
	assert.NotContains(t, page, ">0.0 s<")
	assert.Contains(t, page, `<td data-label="approval rate">none</td>`)
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
