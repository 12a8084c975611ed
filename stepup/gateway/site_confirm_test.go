package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/browsertest"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

var pickAttr = regexp.MustCompile(`name="asu-pick" value="([^"]*)"`)

// TestApprovalPageConfirmsTheKeyValue: the page lists the four options,
// posted picks of look-alikes (and none, and junk) are refused with their
// codes and leave the ticket pending, and the right pick approves.
func TestApprovalPageConfirmsTheKeyValue(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil, gate.WithConfirmation(card.ClassExternal), gate.WithExecutor("send_email", &recorder{}))
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), &gateway.SiteOptions{Tickets: h.Gate})
	require.NoError(t, err)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	r := &rig{Harness: h, site: srv}
	tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)

	_, body := r.page(t, "/approve/"+string(tk.ID))
	var picks []string
	for _, m := range pickAttr.FindAllStringSubmatch(body, -1) {
		picks = append(picks, html.UnescapeString(m[1]))
	}
	require.Len(t, picks, 4, "the page offers four options")
	c, err := h.Gate.Desk().Confirmation(ctx, tk.ID)
	require.NoError(t, err)
	right := ""
	for i, ch := range c.Choices {
		assert.Equal(t, ch.Pick, picks[i], "in the gate's order")
		assert.Contains(t, body, ch.Text)
		if ch.Text == "example.com" {
			right = ch.Pick
		}
	}
	opts, _ := r.pageOptions(t, tk.ID)
	post := func(pick string) (int, string) {
		assertion, err := h.Authenticator.Assert(opts)
		require.NoError(t, err)
		b, err := json.Marshal(map[string]any{"pick": pick, "credential": json.RawMessage(assertion)})
		require.NoError(t, err)
		resp, out := r.post(t, "/approve/"+string(tk.ID)+"/picked", b)
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(out, &e)
		return resp.StatusCode, e.Error.Code
	}
	for _, p := range append(picks, "", "00", fmt.Sprintf("%064d", 0)) {
		if p == right {
			continue
		}
		status, code := post(p)
		assert.Equal(t, http.StatusForbidden, status, p)
		if p == "" {
			assert.Equal(t, gateway.CodePickNeeded, code)
		} else {
			assert.Equal(t, gateway.CodeWrongPick, code, p)
		}
		got, err := h.Gate.Ticket(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, got.Status)
	}
	assertion, err := h.Authenticator.Assert(opts)
	require.NoError(t, err)
	resp, out := r.post(t, "/approve/"+string(tk.ID), assertion)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the plain approval needs a pick: %s", out)
	status, _ := post(right)
	require.Equal(t, http.StatusOK, status)
	got, err := h.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

// TestBrowserConfirmation: in Chromium, the approval page shows the
// options; a look-alike pick is refused and the card shown again with
// nothing picked; the right pick then approves.
func TestBrowserConfirmation(t *testing.T) {
	bctx := browsertest.Start(t, "the real-browser confirmation test", 900, 1400)
	b := startSeedBrowserSite(t, gate.WithDwell(0), gate.WithConfirmation(card.ClassExternal))
	dana := b.tab(t, bctx, "user:dana")
	ctx, cancel := context.WithTimeout(dana, 60*time.Second)
	defer cancel()
	id := b.propose(t, "send_email", `{"to":"finance@example.com","subject":"Q3","attachment":"q3.csv"}`)
	c, err := b.gate.Desk().Confirmation(context.Background(), id)
	require.NoError(t, err)
	right, wrong := -1, -1
	for i, ch := range c.Choices {
		if ch.Text == "example.com" {
			right = i
		} else if wrong < 0 {
			wrong = i
		}
	}
	require.Len(t, c.Choices, 4)
	require.GreaterOrEqual(t, right, 0)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(gateway.ApprovalLink(b.rp.Origin, id)),
		chromedp.WaitVisible(chromedp.ID("asu-confirm"))))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("input[name=asu-pick]").length`))
	require.NoError(t, err)
	require.Equal(t, 4, n)
	waitFor(t, ctx, `!!document.body.dataset.ready`)
	click := func(i int) {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(
			`(document.querySelectorAll("input[name=asu-pick]")[%d].checked = true, delete document.body.dataset.refused, true)`, i)))
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("asu-approve"))))
	}
	click(wrong)
	waitFor(t, ctx, `document.body.dataset.refused === "wrong_pick"`)
	checked, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("input[name=asu-pick]:checked").length`))
	require.NoError(t, err)
	assert.Zero(t, checked, "the card is shown again with nothing picked")
	tk, err := b.gate.Ticket(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	waitFor(t, ctx, `!document.getElementById("asu-approve").disabled`)
	click(right)
	waitFor(t, ctx, `document.body.dataset.decided === "approved"`)
	tk, err = b.gate.Ticket(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, tk.Status)
}

// startSeedBrowserSite is startBrowserSite on the seed catalog, whose
// send_email names its recipient for the card.
func startSeedBrowserSite(t *testing.T, opts ...gate.Option) *browserSite {
	t.Helper()
	return serveBrowserSite(t, stepuptest.SeedCatalog(), nil, opts...)
}
