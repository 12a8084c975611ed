package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// noticeBox records the notices it is handed; its behaviour is set per
// test: block until released, fail, or panic.
type noticeBox struct {
	mu      sync.Mutex
	got     []notify.Notice
	release chan struct{} // non-nil: Notify waits for it
	fail    error
	panics  bool
}

func (b *noticeBox) Notify(ctx context.Context, n notify.Notice) error {
	if b.release != nil {
		select {
		case <-b.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b.mu.Lock()
	b.got = append(b.got, n)
	b.mu.Unlock()
	if b.panics {
		panic("notifier bug")
	}
	return b.fail
}

func (b *noticeBox) notices() []notify.Notice {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]notify.Notice(nil), b.got...)
}

func link(id stepup.TicketID) string { return "https://approve.example.com/approve/" + string(id) }

// TestNotifierHearsOfEveryParkedTicketOnly: a parked ticket is notified
// once, with its link, class, user and approvers and nothing of its
// arguments; allowed and denied calls, and a request merged into a
// pending ticket, are not.
func TestNotifierHearsOfEveryParkedTicketOnly(t *testing.T) {
	box := &noticeBox{}
	w := newWorld(t, gate.WithNotifier(box, link))
	ctx := context.Background()

	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	again, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, tk.ID, again.ID, "merged")
	allowed, err := w.Gate.Propose(ctx, stepup.Call{Tool: "read_file", Args: []byte(`{"path":"q3.csv"}`),
		Session: "sess-1", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, allowed.Status)
	denied, err := w.Gate.Propose(ctx, stepup.Call{Tool: "no_such_tool", Args: []byte(`{}`),
		Session: "sess-1", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusDenied, denied.Status)

	require.Eventually(t, func() bool { return len(box.notices()) >= 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond) // room for a wrong second notice to arrive
	got := box.notices()
	require.Len(t, got, 1)
	n := got[0]
	assert.Equal(t, string(tk.ID), n.Ticket)
	assert.Equal(t, "send_email", n.Tool)
	assert.Equal(t, "external", n.Class)
	assert.Equal(t, "user:dana", n.User)
	assert.Equal(t, []string{"user:dana"}, n.Approvers)
	assert.Equal(t, link(tk.ID), n.Link)
	assert.Equal(t, tk.ExpiresAt.Unix(), n.ExpiresAt.Unix())
	require.NoError(t, n.Validate())
	raw, err := json.Marshal(n)
	require.NoError(t, err)
	for _, secret := range []string{"finance@example.com", "Q3 summary", "q3.csv"} {
		assert.NotContains(t, string(raw), secret, "a notice carries no argument")
	}
}

// TestNotifierNeverBlocksOrChangesADecision: a notifier that hangs, fails
// or panics leaves every proposal answered at once and the tickets as
// they would be without it; more notices than the gate keeps in flight
// are dropped, not queued behind the agent.
func TestNotifierNeverBlocksOrChangesADecision(t *testing.T) {
	for name, box := range map[string]*noticeBox{
		"hangs":  {release: make(chan struct{})},
		"fails":  {fail: errors.New("webhook down")},
		"panics": {panics: true},
	} {
		t.Run(name, func(t *testing.T) {
			// Flood control off: a hundred pending tickets of one session.
			w := newWorld(t, gate.WithNotifier(box, link), gate.WithoutFloodControlUnsafe())
			ctx := context.Background()
			for i := range 100 { // more than the gate keeps in flight
				done := make(chan stepup.Ticket, 1)
				go func() {
					tk, err := w.Gate.Propose(ctx, sendEmail(fmt.Sprintf("finance+%d@example.com", i)))
					assert.NoError(t, err)
					done <- tk
				}()
				select {
				case tk := <-done:
					require.Equal(t, stepup.StatusPending, tk.Status)
				case <-time.After(5 * time.Second):
					t.Fatal("Propose waited for the notifier")
				}
			}
			if box.release != nil {
				close(box.release)
			}
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			got, err := w.Approve(tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, got.Status)
		})
	}
}

func TestWithNotifierRefusesHalfAConfiguration(t *testing.T) {
	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	for _, o := range []gate.Option{gate.WithNotifier(nil, link), gate.WithNotifier(&noticeBox{}, nil)} {
		_, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), o)
		assert.ErrorIs(t, err, stepup.ErrConfig)
	}
}
