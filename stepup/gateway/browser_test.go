package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/internal/browsertest"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// TestBrowserPasskeyApproval runs the approval site in headless Chromium
// with a virtual authenticator (CTAP2, internal, resident keys, user
// verification): a passkey is enrolled through the invite page with the
// browser's own navigator.credentials.create, a runtime proposes
// send_email through the Client, the approver approves on the approval
// page with navigator.credentials.get, and the runtime's Wait sees the
// approval and Execute runs the call once; a second call is denied with
// the deny button, which signs the deny challenge. An approved call is
// revoked from its link with the revoke button, and the link opened on
// 127.0.0.1 names the origin to use. The receipt of the browser's
// assertion verifies offline with the enrolled key alone.
func TestBrowserPasskeyApproval(t *testing.T) {
	bctx := browsertest.Start(t, "the real-browser WebAuthn test", 900, 1400)
	dir := browsertest.Artifacts(t)

	// The approval site is http://localhost:PORT: a secure context, so
	// WebAuthn works without TLS, with RP ID "localhost".
	siteLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	agentLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rp := passkey.RelyingParty{ID: "localhost", Origin: "http://localhost:" + port(t, siteLn), Name: "asu approvals"}
	files := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(files, "q3.csv"), []byte("region,revenue\nwest,410\neast,385\n"), 0o600))
	st := memory.New(nil)
	exec := &recorder{}
	approver, err := passkey.New(st, rp)
	require.NoError(t, err)
	enroll, err := passkey.NewEnrollment(st, rp)
	require.NoError(t, err)
	gate, err := gate.New(st, stepuptest.SeedCatalog(), approver, gate.WithDwell(0),
		gate.WithResolver(canon.FileResolver{Root: files}), gate.WithExecutor("send_email", exec))
	require.NoError(t, err)
	api, err := gateway.NewAgentAPI(gate, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	site, err := gateway.NewSite(gate.Desk(), enroll, rp, nil)
	require.NoError(t, err)
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 2)
	go func() { served <- gateway.Serve(sctx, gateway.NewServer(api, api.MaxWait()), agentLn) }()
	go func() { served <- gateway.Serve(sctx, gateway.NewServer(site, 0), siteLn) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-served)
		assert.NoError(t, <-served)
	})

	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()

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

	// Enroll with the invite link and the browser's own credentials.create.
	link, err := gateway.InviteLink(ctx, enroll, rp.Origin, "user:dana")
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(link), chromedp.Click(chromedp.ID("asu-create"))))
	waitFor(t, ctx, `document.body.dataset.enrolled === "yes"`)
	creds, err := st.CredentialsByUser(ctx, "user:dana")
	require.NoError(t, err)
	require.Len(t, creds, 1, "the browser's passkey is enrolled")

	// A runtime proposes through the agent API.
	client, err := remote.NewClient("http://"+agentLn.Addr().String(), agentToken, nil)
	require.NoError(t, err)
	tk, err := client.Propose(ctx, stepup.Call{Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary","attachment":"q3.csv"}`),
		Task: "t-42", Step: "s-1", Session: "sess-1", Rationale: "Dana asked for the Q3 numbers.",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	waited := make(chan stepup.Ticket, 1)
	go func() {
		got, _ := client.Wait(ctx, tk.ID)
		waited <- got
	}()

	// The approver opens the link; a picture of the page for a person.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(gateway.ApprovalLink(rp.Origin, tk.ID)),
		chromedp.WaitVisible(chromedp.ID("asu-approve"))))
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shot := filepath.Join(dir, "approval-page.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("approval page screenshot: %s", shot)
	cardText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".asu-card")))
	require.NoError(t, err)
	assert.Contains(t, cardText, "finance@example.com")
	// The page's script said the card is shown, with the page's view
	// token, and the site took it.
	require.Eventually(t, func() bool {
		a, err := st.Get(context.Background(), string(tk.ID))
		return err == nil && !a.ShownAt.IsZero()
	}, 10*time.Second, 20*time.Millisecond, "the page's shown post was not taken")

	waitFor(t, ctx, `!!document.body.dataset.ready`) // the gate answered the showing
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("asu-approve"))))
	waitFor(t, ctx, `document.body.dataset.decided === "approved"`)

	select {
	case got := <-waited:
		assert.Equal(t, stepup.StatusApproved, got.Status, "the runtime's Wait saw the approval")
	case <-ctx.Done():
		t.Fatal("Wait did not return after the approval")
	}
	res, err := client.Execute(ctx, tk.ID)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sent":true}`, string(res.Output))
	_, err = client.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrConsumed)
	assert.Equal(t, 1, exec.count(), "executed once")

	// A denial is signed too: the deny button signs the deny challenge.
	other, err := client.Propose(ctx, stepup.Call{Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@exarnple.com","subject":"Q3 summary","attachment":"q3.csv"}`),
		Task: "t-42", Step: "s-2", Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(gateway.ApprovalLink(rp.Origin, other.ID)),
		chromedp.SendKeys(chromedp.ID("asu-reason"), "look-alike domain"),
		chromedp.Click(chromedp.ID("asu-deny"))))
	waitFor(t, ctx, `document.body.dataset.decided === "denied"`)
	denied, err := client.Wait(ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, denied.Status)
	assert.Equal(t, "denied by user:dana: look-alike domain", denied.Reason)

	// Approved but not run yet: the same link offers to revoke it, and the
	// revoke button signs the deny challenge with the passkey.
	third, err := client.Propose(ctx, stepup.Call{Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q4 summary","attachment":"q3.csv"}`),
		Task: "t-42", Step: "s-3", Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(gateway.ApprovalLink(rp.Origin, third.ID))))
	waitFor(t, ctx, `!!document.body.dataset.ready`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("asu-approve"))))
	waitFor(t, ctx, `document.body.dataset.decided === "approved"`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(gateway.ApprovalLink(rp.Origin, third.ID)),
		chromedp.SendKeys(chromedp.ID("asu-reason"), "changed my mind"),
		chromedp.Click(chromedp.ID("asu-revoke-button"))))
	waitFor(t, ctx, `document.body.dataset.decided === "revoked"`)
	_, err = client.Execute(ctx, third.ID)
	assert.ErrorIs(t, err, stepup.ErrRevoked)

	// Opened on 127.0.0.1, the page says which origin to use.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("http://"+siteLn.Addr().String()+"/approve/"+string(third.ID))))
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".asu-notice")))
	require.NoError(t, err)
	assert.Contains(t, notice, "Open it here instead")
	assert.Contains(t, notice, rp.Origin+"/approve/"+string(third.ID))

	rc, err := gate.Desk().Receipt(ctx, tk.ID)
	require.NoError(t, err)
	key, err := receipt.ParseCOSEKey(creds[0].PublicKey)
	require.NoError(t, err)
	_, err = receipt.Verify(rc, key, receipt.Policy{RPID: rp.ID, Origins: []string{rp.Origin}})
	assert.NoError(t, err, "the browser's assertion is a receipt that verifies offline")
}

// waitFor polls expr in the page until it is true, and on failure reports
// what the page's status line said.
func waitFor(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(pctx, chromedp.Poll[bool](expr))
	if err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("asu-status")||{}).textContent || ""`))
		require.NoError(t, errors.Join(err, errors.New("page status: "+status)))
	}
}

func port(t *testing.T, ln net.Listener) string {
	t.Helper()
	_, p, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	return p
}
