package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
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
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/browsertest"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store/memory"
)

// slowShown delays the "card shown" posts by before (ahead of the site)
// and after (once the site answered), as a slow network would.
type slowShown struct {
	next          http.Handler
	before, after func() time.Duration
}

func (s slowShown) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/shown") {
		time.Sleep(s.before())
		s.next.ServeHTTP(w, r)
		if f, ok := w.(http.Flusher); ok {
			time.Sleep(s.after())
			f.Flush()
		}
		return
	}
	s.next.ServeHTTP(w, r)
}

// browserSite is an approval site in Chromium: a gate on a real clock,
// one tab per approver, each with its own virtual authenticator.
type browserSite struct {
	gate  *gate.Gate
	st    *memory.Store
	rp    passkey.RelyingParty
	exec  *recorder
	enrol *passkey.Enrollment
}

func startBrowserSite(t *testing.T, delay *slowShown, opts ...gate.Option) *browserSite {
	t.Helper()
	cat, err := policy.NewCatalog("browser-dwell-1",
		policy.Tool{Name: "send_email", Title: "Send an email", Class: card.ClassExternal},
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible, Approvers: "finance", Quorum: 2})
	require.NoError(t, err)
	return serveBrowserSite(t, cat, delay, append([]gate.Option{gate.WithApproverGroup("finance", "user:dana", "user:erin")}, opts...)...)
}

// serveBrowserSite serves an approval site of a gate deciding with pol
// on a real clock, its send_email and issue_refund runs recorded; delay,
// when set, slows the page's "shown" post.
func serveBrowserSite(t *testing.T, pol plug.Policy, delay *slowShown, opts ...gate.Option) *browserSite {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rp := passkey.RelyingParty{ID: "localhost", Origin: "http://localhost:" + port(t, ln), Name: "asu approvals"}
	st := memory.New(nil)
	approver, err := passkey.New(st, rp)
	require.NoError(t, err)
	enroll, err := passkey.NewEnrollment(st, rp)
	require.NoError(t, err)
	b := &browserSite{st: st, rp: rp, exec: &recorder{}, enrol: enroll}
	b.gate, err = gate.New(st, pol, approver, append([]gate.Option{gate.WithExecutor("send_email", b.exec),
		gate.WithExecutor("issue_refund", b.exec)}, opts...)...)
	require.NoError(t, err)
	site, err := gateway.NewSite(b.gate.Desk(), enroll, rp, &gateway.SiteOptions{Tickets: b.gate})
	require.NoError(t, err)
	var h http.Handler = site
	if delay != nil {
		delay.next = site
		h = *delay
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- gateway.Serve(sctx, gateway.NewServer(h, 0), ln) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-served)
	})
	return b
}

// tab opens a new tab with its own virtual authenticator and enrolls
// user's passkey in it.
func (b *browserSite) tab(t *testing.T, bctx context.Context, user string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{
				Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
				HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
			}})
		return err
	})))
	link, err := gateway.InviteLink(ctx, b.enrol, b.rp.Origin, user)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(link), chromedp.Click(chromedp.ID("asu-create"))))
	waitFor(t, ctx, `document.body.dataset.enrolled === "yes"`)
	return ctx
}

func (b *browserSite) propose(t *testing.T, tool, args string) stepup.TicketID {
	t.Helper()
	tk, err := b.gate.Propose(context.Background(), stepup.Call{Tool: tool, Args: json.RawMessage(args), Session: "s",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	return tk.ID
}

// TestBrowserDwellCountsFromTheRecordedShowing: with a 10 s dwell and
// the page's "shown" post delayed by up to 2 s (before the site records
// it, after it answers, or both), the approve button enables no sooner
// than 10 s after the showing the gate recorded, and the approval it
// then allows is never refused as too soon.
func TestBrowserDwellCountsFromTheRecordedShowing(t *testing.T) {
	bctx := browsertest.Start(t, "the real-browser dwell test", 900, 1200)
	const dwell = 10 * time.Second
	delays := []struct{ before, after time.Duration }{{2 * time.Second, 0}, {0, 2 * time.Second}, {time.Second, time.Second}}
	i := 0
	slow := &slowShown{before: func() time.Duration { return delays[i%len(delays)].before },
		after: func() time.Duration { return delays[i%len(delays)].after }}
	b := startBrowserSite(t, slow, gate.WithDwell(dwell, card.ClassExternal))
	dana := b.tab(t, bctx, "user:dana")
	for i = range delays {
		t.Run(fmt.Sprintf("before %v after %v", delays[i].before, delays[i].after), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(dana, 60*time.Second)
			defer cancel()
			id := b.propose(t, "send_email", fmt.Sprintf(`{"to":"finance@example.com","subject":"Q%d"}`, i+1))
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(gateway.ApprovalLink(b.rp.Origin, id)),
				chromedp.WaitVisible(chromedp.ID("asu-approve"))))
			disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("asu-approve").disabled`))
			require.NoError(t, err)
			assert.True(t, disabled, "the button is held while the showing is unanswered")
			waitFor(t, ctx, `!!document.body.dataset.ready`)
			ready, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.ready`))
			require.NoError(t, err)
			readyMS, err := strconv.ParseInt(ready, 10, 64)
			require.NoError(t, err)
			a, err := b.st.Get(ctx, string(id))
			require.NoError(t, err)
			require.False(t, a.ShownAt.IsZero())
			assert.GreaterOrEqual(t, readyMS, a.ShownAt.Add(dwell).UnixMilli(),
				"the button enabled %v after the recorded showing", time.UnixMilli(readyMS).Sub(a.ShownAt))
			require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("asu-approve"))))
			waitFor(t, ctx, `document.body.dataset.decided === "approved" || !!document.body.dataset.refused`)
			refused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.refused || ""`))
			require.NoError(t, err)
			assert.Empty(t, refused, "an approval the page allowed was refused")
		})
	}
}

// TestBrowserRuleOfTwo: Dana and Erin, each in their own tab with their
// own passkey. Dana approves a refund that needs two of finance: her page
// says 1 of 2 and that one more of finance is awaited, never that it may
// run; Erin's page says the same, naming Dana; Dana approving again is
// told she already approved; Erin approves, her page says it may run, it
// runs once, and both pages then say it has run.
func TestBrowserRuleOfTwo(t *testing.T) {
	bctx := browsertest.Start(t, "the real-browser rule-of-two test", 900, 1200)
	b := startBrowserSite(t, nil, gate.WithDwell(0))
	dana, erin := b.tab(t, bctx, "user:dana"), b.tab(t, bctx, "user:erin")
	ctx, cancel := context.WithTimeout(dana, 90*time.Second)
	defer cancel()
	id := b.propose(t, "issue_refund", `{"order":"o-7","amount":40}`)
	link := gateway.ApprovalLink(b.rp.Origin, id)
	const progress = "1 of 2 approved by user:dana; waiting for one more of finance"
	text := func(ctx context.Context, sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("`+sel+`")||{}).textContent||""`))
		require.NoError(t, err)
		return s
	}

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(link)))
	waitFor(t, ctx, `!!document.body.dataset.ready`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("asu-approve"))))
	waitFor(t, ctx, `document.body.dataset.voted === "yes"`)
	assert.Contains(t, text(ctx, "#asu-status"), progress)
	assert.NotContains(t, text(ctx, "#asu-status"), "may now run")
	assert.Contains(t, text(ctx, "#asu-progress"), progress)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(link)))
	assert.Contains(t, text(ctx, "#asu-progress"), progress, "Dana's page, reloaded")
	assert.Contains(t, text(ctx, ".asu-who"), "May approve: user:erin.")
	waitFor(t, ctx, `!!document.body.dataset.ready`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("asu-approve"))))
	waitFor(t, ctx, `!!document.body.dataset.refused`)
	refused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.refused`))
	require.NoError(t, err)
	assert.Equal(t, gateway.CodeAlreadyApproved, refused)
	assert.Contains(t, text(ctx, "#asu-status"), "You already approved this request")

	ectx, ecancel := context.WithTimeout(erin, 60*time.Second)
	defer ecancel()
	require.NoError(t, chromedp.Do(ectx, chromedp.Navigate(link)))
	assert.Contains(t, text(ectx, "#asu-progress"), progress, "Erin's page names Dana")
	waitFor(t, ectx, `!!document.body.dataset.ready`)
	require.NoError(t, chromedp.Do(ectx, chromedp.Click(chromedp.ID("asu-approve"))))
	waitFor(t, ectx, `document.body.dataset.decided === "approved"`)
	assert.Contains(t, text(ectx, "#asu-status"), "The agent may now run exactly this action, once.")

	_, err = b.gate.Execute(ctx, id)
	require.NoError(t, err)
	_, err = b.gate.Execute(ctx, id)
	assert.ErrorIs(t, err, stepup.ErrConsumed)
	assert.Equal(t, 1, b.exec.count(), "executed once")
	for _, c := range []context.Context{ctx, ectx} {
		require.NoError(t, chromedp.Do(c, chromedp.Navigate(link)))
		assert.Contains(t, text(c, ".asu-notice"), "has run")
	}
}
