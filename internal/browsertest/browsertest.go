// Package browsertest starts the headless Chromium that asu's browser tests
// drive, and says where they leave files for a person to look at.
//
// The browser is the one at ASU_CHROMIUM (Debian's chromium package in CI);
// a test without it skips with a one-line reason. It runs with the flags a
// root, offline machine needs: no sandbox, no GPU, no QUIC, no first-run or
// background network traffic, and a fresh profile per test.
package browsertest

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// Start returns a context for a new headless Chromium with a window of
// width by height pixels, or skips t when ASU_CHROMIUM is unset; why names
// what the test shows, for the skip message. The browser has started when
// Start returns, so callers may put timeouts on later actions, and it is
// stopped when t ends.
func Start(t testing.TB, why string, width, height int) context.Context {
	t.Helper()
	path := os.Getenv("ASU_CHROMIUM")
	if path == "" {
		t.Skipf("set ASU_CHROMIUM to a Chromium binary to run %s", why)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser; it must not carry a timeout,
	// or the timeout would end the browser with it.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	// Headless Chromium keeps its window at least 500 pixels wide whatever
	// the window size says; the viewport is set as a device would set it.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("Chromium viewport: %v", err)
	}
	return ctx
}

// Artifacts returns the directory for files a person should look at after
// the run (screenshots): ASU_ARTIFACTS, or else a new temporary directory
// that outlives the test. It logs nothing; callers log the file they write.
func Artifacts(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ASU_ARTIFACTS")
	if dir == "" {
		d, err := os.MkdirTemp("", "asu-artifacts-")
		if err != nil {
			t.Fatalf("artifacts directory: %v", err)
		}
		return d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts directory: %v", err)
	}
	return dir
}
