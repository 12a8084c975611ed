package gate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// floodCall is the i-th distinct call of one session that needs approval:
// distinct steps, so the store never merges two of them.
func floodCall(session, user string, i int) stepup.Call {
	c := sendEmail("finance@example.com")
	c.Session, c.Step = session, fmt.Sprintf("s-%d", i)
	c.Principal.User = user
	return c
}

// rateOnly are limits with only the per-session rate: no pending caps, no
// user rate, no lockouts, so a test sees the rate alone.
var rateOnly = flood.Limits{Session: flood.Rate{N: 10, Per: 10 * time.Minute}, User: flood.Rate{N: -1},
	SessionLockout: flood.Lockout{After: -1}, UserLockout: flood.Lockout{After: -1},
	PendingPerSession: -1, PendingPerUser: -1}

// limiter builds a limiter on h's store and clock.
func limiter(t *testing.T, st store.Counters, clock *stepuptest.Clock, l flood.Limits) *flood.Limiter {
	t.Helper()
	lim, err := flood.New(st, l, clock.Now)
	require.NoError(t, err)
	return lim
}

// proposeMany proposes n distinct calls of one session through gates in
// turn and counts the parked and the denied, checking every denial's
// reason starts with wantReason.
func proposeMany(t *testing.T, gates []*gate.Gate, n int, wantReason string) (parked, denied int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		tk, err := gates[i%len(gates)].Propose(ctx, floodCall("sess-flood", "user:dana", i))
		require.NoError(t, err)
		switch tk.Status {
		case stepup.StatusPending:
			parked++
		case stepup.StatusDenied:
			denied++
			if wantReason != "" && !strings.HasPrefix(tk.Reason, wantReason) {
				t.Fatalf("denial %d: reason %q, want prefix %q", i, tk.Reason, wantReason)
			}
		default:
			t.Fatalf("call %d: status %s", i, tk.Status)
		}
	}
	return parked, denied
}

func TestFloodThousandProposalsOneSession(t *testing.T) {
	tests := []struct {
		name       string
		opts       func(*testing.T, *stepuptest.Harness) []gate.Option
		wantParked int
		wantReason string
	}{
		{"naive gate without flood control", func(*testing.T, *stepuptest.Harness) []gate.Option {
			return []gate.Option{gate.WithoutFloodControlUnsafe()}
		}, 1000, ""},
		{"the rate alone", func(t *testing.T, h *stepuptest.Harness) []gate.Option {
			return []gate.Option{gate.WithFlood(limiter(t, h.Store, h.Clock, rateOnly))}
		}, 10, "rate limited: too many approval requests from this session; retry after "},
		{"default limits: the pending cap binds first", func(*testing.T, *stepuptest.Harness) []gate.Option {
			return nil
		}, flood.DefaultPendingPerSession, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := stepuptest.NewGate(t, nil) // for its store and clock
			g, err := gate.New(h.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store),
				tt.opts(t, h)...)
			require.NoError(t, err)
			parked, denied := proposeMany(t, []*gate.Gate{g}, 1000, tt.wantReason)
			assert.Equal(t, tt.wantParked, parked)
			assert.Equal(t, 1000-tt.wantParked, denied)
			pending, _, err := h.Store.List(context.Background(), store.Filter{States: []store.State{store.Pending},
				Session: "sess-flood", Limit: store.MaxListLimit})
			require.NoError(t, err)
			assert.Len(t, pending, tt.wantParked, "what reaches the approver's queue")
		})
	}
}

func TestFloodRefusalIsAuditedWithRetryAfter(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	g, err := gate.New(h.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store), gate.WithFlood(limiter(t, h.Store, h.Clock, rateOnly)))
	require.NoError(t, err)
	h.Clock.Advance(2 * time.Minute) // two minutes into the ten-minute window
	_, _ = proposeMany(t, []*gate.Gate{g}, 10, "")
	tk, err := g.Propose(ctx, floodCall("sess-flood", "user:dana", 10))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusDenied, tk.Status)
	// The sliding estimate admits again once a tenth of the full window
	// ending at 09:10 has aged out: at 09:11, nine minutes from now.
	assert.Equal(t, "rate limited: too many approval requests from this session; retry after 9m0s", tk.Reason)
	assert.Equal(t, 9*time.Minute, tk.RetryAfter)

	rows, err := h.Store.AuditByTask(ctx, "t-42")
	require.NoError(t, err)
	last := rows[len(rows)-1]
	assert.Equal(t, audit.DecisionDeny, last.Decision)
	assert.Equal(t, tk.Reason, last.Reason)
	assert.Equal(t, string(tk.ID), last.TicketID)

	h.Clock.Advance(tk.RetryAfter - time.Second)
	tk, err = g.Propose(ctx, floodCall("sess-flood", "user:dana", 11))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status, "a second before retry-after")
	h.Clock.Advance(time.Second)
	tk, err = g.Propose(ctx, floodCall("sess-flood", "user:dana", 12))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status, "admitted again at retry-after")
}

func TestFloodAllowedAndDeniedCallsAreNotAdmitted(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	g, err := gate.New(h.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store), gate.WithFlood(limiter(t, h.Store, h.Clock, rateOnly)))
	require.NoError(t, err)
	for i := range 100 {
		c := floodCall("sess-flood", "user:dana", i)
		c.Tool = "write_draft" // reversible: allowed at once
		tk, err := g.Propose(ctx, c)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusAllowed, tk.Status)
		c.Tool = "run_shell" // unknown: denied at once
		tk, err = g.Propose(ctx, c)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusDenied, tk.Status)
		require.Equal(t, "unknown tool", tk.Reason)
	}
	parked, _ := proposeMany(t, []*gate.Gate{g}, 20, "")
	assert.Equal(t, 10, parked, "answers given at once spent none of the rate")
}

func TestFloodLockoutAfterRepeatedDenials(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil) // default flood limits
	desk := h.Gate.Desk()
	deny := func(i int) {
		tk, err := h.Gate.Propose(ctx, floodCall("sess-lock", "user:dana", i))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		_, err = stepuptest.Deny(ctx, desk, h.Authenticator, tk.ID, "not now")
		require.NoError(t, err)
	}
	for i := range flood.DefaultSessionLockout.After {
		deny(i)
	}
	tk, err := h.Gate.Propose(ctx, floodCall("sess-lock", "user:dana", 99))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Equal(t, "locked out: approvers denied too many requests of this session in a row; retry after 15m0s", tk.Reason)
	assert.Equal(t, flood.DefaultSessionLockout.For, tk.RetryAfter)

	other, err := h.Gate.Propose(ctx, floodCall("sess-other", "user:dana", 0))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, other.Status, "the user's other sessions are not locked yet")

	h.Clock.Advance(flood.DefaultSessionLockout.For)
	tk, err = h.Gate.Propose(ctx, floodCall("sess-lock", "user:dana", 100))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, "the lockout ends")
	_, err = h.Approve(tk.ID)
	require.NoError(t, err)
	deny(101)
	tk, err = h.Gate.Propose(ctx, floodCall("sess-lock", "user:dana", 102))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status, "an approval ended the run of denials")
}

func TestFloodExpiryAndCancelAreNotDenials(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	for i := range 2 * flood.DefaultSessionLockout.After {
		tk, err := h.Gate.Propose(ctx, floodCall("sess-idle", "user:dana", i))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		h.Clock.Advance(16 * time.Minute) // nobody decides: cancelled or a safe alternative
		_, err = h.Gate.Sweep(ctx)
		require.NoError(t, err)
	}
	tk, err := h.Gate.Propose(ctx, floodCall("sess-idle", "user:dana", 100))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status)
}

func TestFloodUserLockoutSpansSessions(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	for i := range flood.DefaultUserLockout.After {
		c := floodCall(fmt.Sprintf("sess-%d", i), "user:dana", i)
		c.Principal.Agent = fmt.Sprintf("agent:a%d", i) // over agents too: the user's own lockout
		tk, err := h.Gate.Propose(ctx, c)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		_, err = h.Deny(tk.ID, "")
		require.NoError(t, err)
	}
	tk, err := h.Gate.Propose(ctx, floodCall("sess-fresh", "user:dana", 0))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Contains(t, tk.Reason, "locked out: approvers denied too many requests of this user in a row")
}

func TestFloodTwoGatesShareTheLimits(t *testing.T) {
	tests := []struct {
		name       string
		shared     bool // one limiter per gate on the shared store, or a store of its own each
		wantParked int
	}{
		{"naive: each gate counts on its own", false, 20},
		{"limits in the shared store", true, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := stepuptest.NewGate(t, nil)
			var gates []*gate.Gate
			for range 2 {
				var counters store.Counters = h.Store
				if !tt.shared {
					counters = newCounterStore(t)
				}
				g, err := gate.New(h.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store), gate.WithFlood(limiter(t, counters, h.Clock, rateOnly)))
				require.NoError(t, err)
				gates = append(gates, g)
			}
			parked, _ := proposeMany(t, gates, 200, "")
			assert.Equal(t, tt.wantParked, parked)
		})
	}
}

func TestFloodPendingCapsTakeTheStricter(t *testing.T) {
	tests := []struct {
		name string
		caps store.Caps
		want int
	}{
		{"flood's default is stricter", store.Caps{PerSession: 50}, flood.DefaultPendingPerSession},
		{"the gate's cap is stricter", store.Caps{PerSession: 2}, 2},
		{"the gate sets no session cap", store.Caps{PerUser: 100}, flood.DefaultPendingPerSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := stepuptest.NewGate(t, nil, gate.WithPendingCaps(tt.caps))
			parked, _ := proposeMany(t, []*gate.Gate{h.Gate}, 20, "")
			assert.Equal(t, tt.want, parked)
		})
	}
}

func TestFloodConfig(t *testing.T) {
	h := stepuptest.NewGate(t, nil)
	lim := limiter(t, h.Store, h.Clock, flood.Limits{})
	for name, opts := range map[string][]gate.Option{
		"nil limiter":          {gate.WithFlood(nil)},
		"limiter and opt-out":  {gate.WithFlood(lim), gate.WithoutFloodControlUnsafe()},
		"opt-out and limiter":  {gate.WithoutFloodControlUnsafe(), gate.WithFlood(lim)},
		"two limiters":         {gate.WithFlood(lim), gate.WithFlood(lim)},
		"executor for asu.*":   {gate.WithExecutor(plug.GrantTool, &recorder{})},
		"executor for asu.foo": {gate.WithExecutor("asu.foo", &recorder{})},
	} {
		_, err := gate.New(h.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store), opts...)
		assert.ErrorIs(t, err, stepup.ErrConfig, name)
	}
}

// newCounterStore is a store of its own: the counters a replica would keep
// if its limits lived in process memory.
func newCounterStore(t *testing.T) store.Counters {
	st := memory.New(nil)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// brokenCounters is a store whose flood counters fail.
type brokenCounters struct{ *memory.Store }

func (brokenCounters) AddCount(context.Context, string, time.Time, int64) (int64, error) {
	return 0, store.ErrClosed
}

func (brokenCounters) GetStreak(context.Context, string) (store.Streak, error) {
	return store.Streak{}, store.ErrClosed
}

func (brokenCounters) GetStreaks(context.Context, []string) ([]store.Streak, error) {
	return nil, store.ErrClosed
}

func (brokenCounters) IncrStreak(context.Context, string, time.Time) (int, error) {
	return 0, store.ErrClosed
}

func TestFloodFailsClosed(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	broken := brokenCounters{h.Store}
	g, err := gate.New(broken, stepuptest.SeedCatalog(), stepuptest.Passkeys(broken), gate.WithFlood(limiter(t, broken, h.Clock, flood.Limits{})))
	require.NoError(t, err)
	tk, err := g.Propose(ctx, floodCall("sess-broken", "user:dana", 0))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Equal(t, "approval requests cannot be admitted now; try again later", tk.Reason)
	c := floodCall("sess-broken", "user:dana", 1)
	c.Tool = "write_draft"
	tk, err = g.Propose(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusAllowed, tk.Status, "calls that need no approver do not need the counters")

	parked, err := h.Gate.Propose(ctx, floodCall("sess-broken", "user:dana", 2))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, parked.Status)
	denied, err := stepuptest.Deny(ctx, g.Desk(), h.Authenticator, parked.ID, "")
	assert.ErrorIs(t, err, stepup.ErrStore, "a denial the lockout did not count is reported")
	assert.Equal(t, stepup.StatusDenied, denied.Status, "and the ticket is denied all the same")
}
