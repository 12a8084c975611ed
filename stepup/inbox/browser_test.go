package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
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

// TestBrowserInbox runs the approval site with the inbox in headless
// Chromium, two approvers of one group in two browser profiles, each with
// a virtual authenticator (CTAP2, resident keys, user verification): erin
// on a desktop window, finn on a phone-sized one. Each enrolls through an
// invite and signs in to the inbox with the passkey. A call for the group
// arrives in both inboxes live; erin approves it from the keyboard (her
// passkey signs the ticket's challenge) and it leaves finn's inbox too.
// Finn denies the next one with the deny button, a reason typed on the
// phone. Revoking finn's passkey ends his session.
func TestBrowserInbox(t *testing.T) {
	bctx := browsertest.Start(t, "the real-browser inbox test", 1100, 1300)
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
		gate.WithResolver(canon.FileResolver{Root: files}), gate.WithExecutor("send_email", &stepuptest.Recorder{}))
	require.NoError(t, err)
	signIn, err := passkey.NewSignIn(approver)
	require.NoError(t, err)
	in, err := inbox.New(g.Desk(), signIn, rp, &inbox.Options{Poll: 200 * time.Millisecond})
	require.NoError(t, err)
	site, err := gateway.NewSite(g.Desk(), enroll, rp, &gateway.SiteOptions{Tickets: g, Sessions: in})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(in.Prefix()+"/", in)
	mux.Handle("/", site)
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- gateway.Serve(sctx, gateway.NewServer(draining{lateAnswers{mux}, in}, 0), ln) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-served, "open streams do not hold the shutdown up")
	})

	ctx, cancel := context.WithTimeout(bctx, 120*time.Second)
	defer cancel()
	desk := person(t, bctx, 1100, 1000, false)
	phone := person(t, bctx, 390, 844, true)

	for who, tab := range map[string]context.Context{erin: desk, finn: phone} {
		link, err := gateway.InviteLink(ctx, enroll, rp.Origin, who)
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(tab, chromedp.Navigate(link), chromedp.Click(chromedp.ID("asu-create"))))
		waitFor(t, tab, `document.body.dataset.enrolled === "yes"`)
		require.NoError(t, chromedp.Do(tab, chromedp.Navigate(inbox.Link(rp.Origin, in.Prefix()))))
		waitFor(t, tab, `document.body.dataset.inbox === "signin"`)
		require.NoError(t, chromedp.Do(tab, chromedp.Click(chromedp.ID("inbox-signin-button"))))
		waitFor(t, tab, `document.body.dataset.inbox === "queue" && document.body.dataset.count === "0"`)
		text, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("inbox-who")))
		require.NoError(t, err)
		assert.Equal(t, who, text)
	}

	// A call for the finance group arrives in both inboxes, live.
	first := propose(t, g, "finance@example.com")
	item := fmt.Sprintf(`document.querySelector('.inbox-item[data-id="%s"]')`, first)
	for _, tab := range []context.Context{desk, phone} {
		waitFor(t, tab, item+` !== null && document.body.dataset.count === "1"`)
	}
	card, err := chromedp.Run(desk, chromedp.Text(chromedp.CSS(".inbox-item .asu-card")))
	require.NoError(t, err)
	assert.Contains(t, card, "finance@example.com")
	others, err := chromedp.Run(desk, chromedp.Text(chromedp.CSS(".inbox-item .inbox-others")))
	require.NoError(t, err)
	assert.Equal(t, "Also may decide: "+finn, others)
	left, err := chromedp.Run(phone, chromedp.Text(chromedp.CSS(".inbox-item .inbox-left")))
	require.NoError(t, err)
	assert.Contains(t, left, "left")
	// Thumb-sized on the phone: full-width buttons at least 48 px high.
	thumb, err := chromedp.Run(phone, chromedp.Evaluate[bool](`(function () {
		var b = document.querySelector(".inbox-item .inbox-approve").getBoundingClientRect();
		var li = document.querySelector(".inbox-item").getBoundingClientRect();
		return b.height >= 48 && b.width >= li.width * 0.8;
	})()`))
	require.NoError(t, err)
	assert.True(t, thumb, "the phone's buttons fill the width and are at least 48 px high")
	screenshot(t, desk, dir, "inbox-desktop.png")
	screenshot(t, phone, dir, "inbox-phone.png")

	// Erin approves from the keyboard: j moves to the request, a approves
	// it with her passkey, over the ticket's own challenge, once the page
	// lets her (the gate refuses an approval within its dwell time of the
	// card being shown, and the page holds the button that long).
	waitFor(t, desk, item+`.querySelector(".inbox-approve").disabled === false`)
	require.NoError(t, chromedp.Do(desk, chromedp.KeyEvent("j")))
	waitFor(t, desk, `document.activeElement === `+item)
	// The page records what it shows after every change from here on, so
	// that what it showed while the decided request lingered is checked
	// however slowly this test runs.
	_, err = chromedp.Run(desk, chromedp.Evaluate[bool](`(function () {
		window.asuSeen = [];
		new MutationObserver(function () {
			window.asuSeen.push(document.body.dataset.count + " " + document.querySelectorAll(".inbox-item").length +
				" " + document.getElementById("inbox-empty").hidden);
		}).observe(document.body, {attributes: true, childList: true, subtree: true});
		return true;
	})()`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(desk, chromedp.KeyEvent("a")))
	waitFor(t, desk, fmt.Sprintf(`document.body.dataset.decided === "%s approved"`, first))
	waitFor(t, phone, `document.body.dataset.count === "0"`)
	waitFor(t, desk, `document.querySelectorAll(".inbox-item").length === 0 && !document.getElementById("inbox-empty").hidden`)
	// While the decided request and its words were still on screen, the
	// page did not also say there is nothing to decide; it did once they
	// were gone.
	seen, err := chromedp.Run(desk, chromedp.Evaluate[[]string](`window.asuSeen`))
	require.NoError(t, err)
	assert.Contains(t, seen, "0 1 true", "the decided request lingers once nothing is left to decide")
	for _, s := range seen {
		var count, items int
		var empty bool
		_, err := fmt.Sscanf(s, "%d %d %t", &count, &items, &empty)
		require.NoError(t, err, s)
		assert.False(t, items > 0 && !empty, "the page said there is nothing to decide with a request on screen: %s", s)
	}
	got, err := g.Ticket(ctx, first)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
	_, err = g.Execute(ctx, first)
	require.NoError(t, err)

	// Finn denies the next one on the phone, with a reason.
	second := propose(t, g, "finance@exarnple.com")
	item = fmt.Sprintf(`.inbox-item[data-id="%s"]`, second)
	for _, tab := range []context.Context{desk, phone} {
		waitFor(t, tab, `document.body.dataset.count === "1"`)
	}
	require.NoError(t, chromedp.Do(phone,
		chromedp.SendKeys(chromedp.CSS(item+" .inbox-reason"), "look-alike domain"),
		chromedp.Click(chromedp.CSS(item+" .inbox-deny"))))
	waitFor(t, phone, fmt.Sprintf(`document.body.dataset.decided === "%s denied"`, second))
	waitFor(t, desk, `document.body.dataset.count === "0"`)
	got, err = g.Ticket(ctx, second)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, got.Status)
	assert.Equal(t, "denied by "+finn+": look-alike domain", got.Reason)

	// Revoking finn's passkey ends his session; erin's goes on.
	creds, err := st.CredentialsByUser(ctx, finn)
	require.NoError(t, err)
	require.Len(t, creds, 1)
	require.NoError(t, enroll.RevokeCredential(ctx, creds[0].ID, "user:admin", "lost phone"))
	waitFor(t, phone, `document.body.dataset.inbox === "signin"`)
	third := propose(t, g, "finance@example.com")
	waitFor(t, desk, fmt.Sprintf(`document.querySelector('.inbox-item[data-id="%s"]') !== null`, third))
	require.Eventually(t, func() bool { return in.Streams() == 1 }, 10*time.Second, 10*time.Millisecond,
		"finn's stream ended with his session; erin's goes on")
}

// draining is the approval site's handler with the inbox's Drain, so
// gateway.Serve ends the inbox's streams at shutdown.
// lateAnswers holds back the answer to a decision posted from the page
// until the inbox's stream (polling every 200 ms) has told the page the
// request is decided: the page keeps its own confirmation in view
// whichever comes first.
type lateAnswers struct{ http.Handler }

func (l lateAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, inbox.DefaultApprovePath) {
		l.Handler.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	l.Handler.ServeHTTP(rec, r)
	time.Sleep(time.Second)
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

type draining struct {
	http.Handler
	in *inbox.Inbox
}

func (d draining) Drain() { d.in.Drain() }

// person opens a browser profile of its own (its own cookies) with a
// virtual authenticator and a viewport of width by height, a phone's when
// mobile.
func person(t *testing.T, bctx context.Context, width, height int64, mobile bool) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(3))
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.EmulateViewport(width, height, opts...)))
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{
				Protocol:                    webauthn.AuthenticatorProtocolCtap2,
				Transport:                   webauthn.AuthenticatorTransportInternal,
				HasResidentKey:              true,
				HasUserVerification:         true,
				IsUserVerified:              true,
				AutomaticPresenceSimulation: true,
			}})
		return err
	})))
	return ctx
}

func propose(t *testing.T, g *gate.Gate, to string) stepup.TicketID {
	t.Helper()
	tk, err := g.Propose(context.Background(), stepup.Call{Tool: "send_email",
		Args: json.RawMessage(`{"to":` + strconv.Quote(to) + `,"subject":"Q3 summary","attachment":"q3.csv"}`),
		Task: "t-42", Session: "sess-1", Rationale: "Dana asked for the Q3 numbers.",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	return tk.ID
}

// waitFor polls expr in the page until it is true, and on failure reports
// what the page's status lines said.
func waitFor(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(pctx, chromedp.Poll[bool](expr)); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(`+
			`"#inbox-status, .inbox-item-status, #asu-status")).map(function (e) { return e.textContent; }).join(" | ")`))
		require.NoError(t, errors.Join(err, errors.New("waiting for "+expr+"; page status: "+status)))
	}
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("inbox screenshot: %s", path)
}
