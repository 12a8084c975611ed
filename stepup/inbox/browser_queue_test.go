package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/internal/browsertest"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// TestBrowserQueueOfTwenty: erin's inbox holding 20 requests lists each on
// one line, all 20 on one 1280 x 800 desktop screen, with the count in
// the header; the arrow keys move through them, opening each (its card
// beside the list) and closing the one before, Enter closes it; on a
// 390 px phone nothing scrolls sideways. Approving one leaves its words
// on screen while the rest stay listed, and "Nothing to decide" shows
// only once nothing is on screen. A sign-out the store refuses says so,
// clears the screen and keeps the button to sign out again; signing out
// clears everything the session showed. Screenshots go to ASU_ARTIFACTS.
func TestBrowserQueueOfTwenty(t *testing.T) {
	bctx := browsertest.Start(t, "the real-browser queue test", 1280, 800)
	dir := browsertest.Artifacts(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	rp := passkey.RelyingParty{ID: "localhost", Origin: "http://localhost:" + port, Name: "asu approvals"}
	files := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(files, "q3.csv"), []byte(stepuptest.Q3), 0o600))
	st := memory.New(nil)
	approver, err := passkey.New(st, rp)
	require.NoError(t, err)
	enroll, err := passkey.NewEnrollment(st, rp)
	require.NoError(t, err)
	g, err := gate.New(st, financeCatalog(t), approver, gate.WithApproverGroup("finance", erin, finn),
		gate.WithResolver(canon.FileResolver{Root: files}), gate.WithExecutor("send_email", &stepuptest.Recorder{}),
		// Twenty requests to twenty vendors nobody wrote to before are more
		// first contacts than flood control admits from one user in an
		// hour; this test is of the queue, not of flood control.
		gate.WithDwell(0), gate.WithoutFloodControlUnsafe())
	require.NoError(t, err)
	signIn, err := passkey.NewSignIn(approver)
	require.NoError(t, err)
	flaky := &flakyDesk{Desk: g.Desk()}
	in, err := inbox.New(flaky, signIn, rp, &inbox.Options{Poll: 100 * time.Millisecond})
	require.NoError(t, err)
	site, err := gateway.NewSite(g.Desk(), enroll, rp, &gateway.SiteOptions{Tickets: g, Sessions: in})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(in.Prefix()+"/", in)
	mux.Handle("/", site)
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- gateway.Serve(sctx, gateway.NewServer(draining{mux, in}, 0), ln) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-served)
	})

	ctx, cancel := context.WithTimeout(bctx, 120*time.Second)
	defer cancel()
	desk := person(t, bctx, 1280, 800, false)
	link, err := gateway.InviteLink(ctx, enroll, rp.Origin, erin)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(desk, chromedp.Navigate(link), chromedp.Click(chromedp.ID("asu-create"))))
	waitFor(t, desk, `document.body.dataset.enrolled === "yes"`)
	require.NoError(t, chromedp.Do(desk, chromedp.Navigate(inbox.Link(rp.Origin, in.Prefix()))))
	waitFor(t, desk, `document.body.dataset.inbox === "signin"`)
	require.NoError(t, chromedp.Do(desk, chromedp.Click(chromedp.ID("inbox-signin-button"))))
	waitFor(t, desk, `document.body.dataset.inbox === "queue"`)

	for i := range 20 {
		tk, err := g.Propose(ctx, stepup.Call{Tool: "send_email",
			Args: json.RawMessage(fmt.Sprintf(`{"to":"ap%02d@vendor%02d.example","subject":"Invoice %d","attachment":"q3.csv"}`, i, i, i)),
			Task: "t-42", Session: fmt.Sprintf("sess-%d", i), Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	}
	waitFor(t, desk, `document.body.dataset.count === "20" && document.querySelectorAll(".inbox-item").length === 20`)
	count, err := chromedp.Run(desk, chromedp.Evaluate[string](`document.getElementById("inbox-count").textContent`))
	require.NoError(t, err)
	assert.Equal(t, "20 to decide", count)
	onScreen, err := chromedp.Run(desk, chromedp.Evaluate[int](`Array.from(document.querySelectorAll(".inbox-item")).filter(function (li) {
		var r = li.querySelector(".inbox-line").getBoundingClientRect();
		return r.top >= 0 && r.bottom <= window.innerHeight;
	}).length`))
	require.NoError(t, err)
	assert.Equal(t, 20, onScreen, "all 20 lines on one desktop screen")
	key, err := chromedp.Run(desk, chromedp.Text(chromedp.CSS(".inbox-item .inbox-key")))
	require.NoError(t, err)
	assert.Contains(t, key, "to vendor")
	shot(t, desk, dir, "inbox-queue-20-1280.png", false)

	// The keys: j opens the first, j again the second and closes the first.
	expanded := `Array.from(document.querySelectorAll(".inbox-item.inbox-expanded")).map(function (li) {
		return Array.from(li.parentNode.children).indexOf(li); }).join(",")`
	require.NoError(t, chromedp.Do(desk, chromedp.KeyEvent("j")))
	waitFor(t, desk, expanded+` === "0"`)
	require.NoError(t, chromedp.Do(desk, chromedp.KeyEvent("j")))
	waitFor(t, desk, expanded+` === "1"`)
	require.NoError(t, chromedp.Do(desk, chromedp.KeyEvent("\r")))
	waitFor(t, desk, expanded+` === ""`)
	require.NoError(t, chromedp.Do(desk, chromedp.KeyEvent("\r")))
	waitFor(t, desk, expanded+` === "1"`)
	shot(t, desk, dir, "inbox-queue-20-1280-open.png", false)

	// Approve the open one: its words stay, the others stay listed.
	second := `document.querySelectorAll(".inbox-item")[1]`
	waitFor(t, desk, second+`.querySelector(".inbox-approve").disabled === false`)
	require.NoError(t, chromedp.Do(desk, chromedp.KeyEvent("a")))
	waitFor(t, desk, `/approved$/.test(document.body.dataset.decided || "")`)
	waitFor(t, desk, `document.body.dataset.count === "19"`)
	empty, err := chromedp.Run(desk, chromedp.Evaluate[bool](`document.getElementById("inbox-empty").hidden`))
	require.NoError(t, err)
	assert.True(t, empty)

	// On a phone (erin's second passkey): one column, nothing sideways.
	phone := person(t, bctx, 390, 844, true)
	link, err = gateway.InviteLink(ctx, enroll, rp.Origin, erin)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(phone, chromedp.Navigate(link), chromedp.Click(chromedp.ID("asu-create"))))
	waitFor(t, phone, `document.body.dataset.enrolled === "yes"`)
	require.NoError(t, chromedp.Do(phone, chromedp.Navigate(inbox.Link(rp.Origin, in.Prefix()))))
	waitFor(t, phone, `document.body.dataset.inbox === "signin"`)
	require.NoError(t, chromedp.Do(phone, chromedp.Click(chromedp.ID("inbox-signin-button"))))
	waitFor(t, phone, `document.body.dataset.count === "19"`)
	wide, err := chromedp.Run(phone, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
	require.NoError(t, err)
	assert.LessOrEqual(t, wide, 0, "the phone's inbox scrolls sideways")
	tall, err := chromedp.Run(phone, chromedp.Evaluate[int](`Array.from(document.querySelectorAll(".inbox-item:not(.inbox-expanded)")).filter(function (li) {
		return li.getBoundingClientRect().height > 80; }).length`))
	require.NoError(t, err)
	assert.Zero(t, tall, "a closed request takes more than two short lines on the phone")
	shot(t, phone, dir, "inbox-queue-20-390.png", true)

	// A sign-out the store refuses: the page says so, shows nothing of
	// the session, and keeps the button.
	flaky.failEnd.Store(true)
	require.NoError(t, chromedp.Do(desk, chromedp.Click(chromedp.ID("inbox-signout"))))
	waitFor(t, desk, `document.getElementById("inbox-status").textContent.indexOf("Not signed out") === 0`)
	refused, err := chromedp.Run(desk, chromedp.Evaluate[string](`document.querySelectorAll(".inbox-item").length + "|" +
		document.getElementById("inbox-who").textContent + "|" + document.getElementById("inbox-signout").hidden`))
	require.NoError(t, err)
	assert.Equal(t, "0||false", refused)

	// Sign out: nothing of erin's session stays on screen.
	flaky.failEnd.Store(false)
	require.NoError(t, chromedp.Do(desk, chromedp.Click(chromedp.ID("inbox-signout"))))
	waitFor(t, desk, `document.body.dataset.inbox === "signin"`)
	left, err := chromedp.Run(desk, chromedp.Evaluate[string](`document.querySelectorAll(".inbox-item").length + "|" +
		document.getElementById("inbox-count").textContent + "|" + document.getElementById("inbox-who").textContent + "|" +
		document.getElementById("inbox-figures").textContent + "|" + document.title`))
	require.NoError(t, err)
	assert.Equal(t, "0||||Approvals inbox", left)
}

func shot(t *testing.T, ctx context.Context, dir, name string, full bool) {
	t.Helper()
	var png []byte
	var err error
	if full {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}
