package gateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/browsertest"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
)

// TestBrowserPracticeRequests: with a practice request after every real
// one, Dana approves a practice request on the approval page and is told
// it was practice and what gave it away, and the figures count a miss;
// she denies the next one, and a catch is counted. Nothing runs.
func TestBrowserPracticeRequests(t *testing.T) {
	bctx := browsertest.Start(t, "the real-browser practice request test", 900, 1400)
	b := startSeedBrowserSite(t, gate.WithDwell(0), gate.WithPractice("", 1))
	dana := b.tab(t, bctx, "user:dana")
	ctx, cancel := context.WithTimeout(dana, 90*time.Second)
	defer cancel()
	practiceOf := func(real stepup.TicketID) stepup.TicketID {
		t.Helper()
		require.NoError(t, b.gate.Settle(context.Background()))
		q, err := b.gate.Desk().Queue(context.Background(), "user:dana", 50)
		require.NoError(t, err)
		for _, e := range q {
			if e.Ticket.ID == real {
				continue
			}
			if _, err := b.gate.Ticket(context.Background(), e.Ticket.ID); errors.Is(err, stepup.ErrNotFound) {
				return e.Ticket.ID // queued for Dana, unknown to the agent's side
			}
		}
		t.Fatal("no practice request in the queue")
		return ""
	}
	decide := func(id stepup.TicketID, button, want string) string {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(gateway.ApprovalLink(b.rp.Origin, id))))
		waitFor(t, ctx, `!!document.body.dataset.ready`)
		waitFor(t, ctx, `!document.getElementById("`+button+`").disabled`)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID(button))))
		waitFor(t, ctx, `document.body.dataset.decided === "`+want+`"`)
		said, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("asu-status").textContent`))
		require.NoError(t, err)
		return said
	}
	count := func() (caught, missed int) {
		t.Helper()
		m, err := b.gate.Admin().Metrics(context.Background(), 24*time.Hour)
		require.NoError(t, err)
		if c := m.ByApprover["user:dana"].Catch; c != nil {
			return c.Caught, c.Missed
		}
		return 0, 0
	}

	first := b.propose(t, "send_email", `{"to":"finance@example.com","subject":"Q3","attachment":"q3.csv"}`)
	said := decide(practiceOf(first), "asu-approve", "denied")
	assert.Contains(t, said, "This was a practice request")
	assert.Contains(t, said, "missed")
	caught, missed := count()
	assert.Equal(t, 0, caught)
	assert.Equal(t, 1, missed, "the figures count a miss")

	second := b.propose(t, "send_email", `{"to":"finance@example.com","subject":"Q4","attachment":"q3.csv"}`)
	said = decide(practiceOf(second), "asu-deny", "denied")
	assert.Contains(t, said, "This was a practice request")
	assert.Contains(t, said, "caught")
	caught, missed = count()
	assert.Equal(t, 1, caught, "and a catch")
	assert.Equal(t, 1, missed)
	assert.Zero(t, b.exec.count(), "a practice request never runs")
}
