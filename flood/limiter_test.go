package flood_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// step is one event in a scenario: at t0+at, session and user ask
// (admit), or an approver denies or approves one of their requests.
type step struct {
	at      time.Duration
	do      string // "admit" (default), "deny", "approve"
	session string
	user    string
	want    error         // for admit: nil, ErrRateLimited or ErrLockedOut
	scope   flood.Scope   // for refusals
	retry   time.Duration // for refusals, when not zero
}

func TestLimiterScenarios(t *testing.T) {
	lockouts := func(session, user flood.Lockout) flood.Limits {
		return flood.Limits{Session: flood.Rate{N: -1}, User: flood.Rate{N: -1}, SessionLockout: session, UserLockout: user}
	}
	tests := []struct {
		name   string
		limits flood.Limits
		steps  []step
	}{
		{
			name:   "session rate, then the previous window ages out",
			limits: onlySession(3),
			steps: []step{
				{at: 0}, {at: time.Second}, {at: 2 * time.Second},
				{at: 3 * time.Second, want: flood.ErrRateLimited, scope: flood.ScopeSession, retry: 77 * time.Second},
				// Next window: estimate 1 + 3×(1−f) is over 3 until f = 1/3.
				{at: 60 * time.Second, want: flood.ErrRateLimited, scope: flood.ScopeSession, retry: 20 * time.Second},
				{at: 79 * time.Second, want: flood.ErrRateLimited, scope: flood.ScopeSession},
				{at: 80 * time.Second},
				{at: 80 * time.Second, want: flood.ErrRateLimited, scope: flood.ScopeSession},
			},
		},
		{
			name:   "a burst at the end of a window gets no fresh allowance after the boundary",
			limits: onlySession(3),
			steps: []step{
				{at: 59 * time.Second}, {at: 59 * time.Second}, {at: 59 * time.Second},
				{at: 60 * time.Second, want: flood.ErrRateLimited, scope: flood.ScopeSession},
				{at: 61 * time.Second, want: flood.ErrRateLimited, scope: flood.ScopeSession},
				{at: 2 * time.Minute}, {at: 2 * time.Minute}, {at: 2 * time.Minute},
			},
		},
		{
			name:   "sessions are limited apart",
			limits: onlySession(1),
			steps: []step{
				{session: "s1"}, {session: "s2"},
				{session: "s1", want: flood.ErrRateLimited, scope: flood.ScopeSession},
			},
		},
		{
			name:   "user rate over all sessions",
			limits: flood.Limits{Session: flood.Rate{N: -1}, User: flood.Rate{N: 3, Per: time.Hour}},
			steps: []step{
				{session: "s1"}, {session: "s2"}, {session: "s3"},
				{session: "s4", want: flood.ErrRateLimited, scope: flood.ScopeUser, retry: time.Hour + 20*time.Minute},
				{session: "s4", user: "other"},
			},
		},
		{
			name:   "a request the session limit refused does not spend the user's rate",
			limits: flood.Limits{Session: flood.Rate{N: 1, Per: time.Minute}, User: flood.Rate{N: 2, Per: time.Minute}},
			steps: []step{
				{session: "s1"},
				{session: "s1", want: flood.ErrRateLimited, scope: flood.ScopeSession},
				{session: "s1", want: flood.ErrRateLimited, scope: flood.ScopeSession},
				{session: "s2"},
				{session: "s3", want: flood.ErrRateLimited, scope: flood.ScopeUser},
			},
		},
		{
			name:   "session lockout after denials in a row, then probation",
			limits: lockouts(flood.Lockout{After: 2, For: 5 * time.Minute}, flood.Lockout{After: -1}),
			steps: []step{
				{do: "deny"}, {},
				{at: time.Minute, do: "deny"},
				{at: time.Minute, want: flood.ErrLockedOut, scope: flood.ScopeSession, retry: 5 * time.Minute},
				{at: 2 * time.Minute, session: "s2"},
				{at: 5*time.Minute + 59*time.Second, want: flood.ErrLockedOut, scope: flood.ScopeSession, retry: time.Second},
				{at: 6 * time.Minute},
				// The run is not over until an approval: one more denial locks again.
				{at: 7 * time.Minute, do: "deny"},
				{at: 7 * time.Minute, want: flood.ErrLockedOut, scope: flood.ScopeSession, retry: 5 * time.Minute},
			},
		},
		{
			name:   "an approval ends the run",
			limits: lockouts(flood.Lockout{After: 2, For: 5 * time.Minute}, flood.Lockout{After: -1}),
			steps: []step{
				{do: "deny"}, {do: "approve"}, {do: "deny"}, {},
				{do: "deny"}, {want: flood.ErrLockedOut, scope: flood.ScopeSession},
			},
		},
		{
			name:   "user lockout over all sessions",
			limits: lockouts(flood.Lockout{After: -1}, flood.Lockout{After: 3, For: time.Hour}),
			steps: []step{
				{do: "deny", session: "s1"}, {do: "deny", session: "s2"}, {session: "s3"},
				{do: "deny", session: "s3"},
				{session: "s4", want: flood.ErrLockedOut, scope: flood.ScopeUser, retry: time.Hour},
				{session: "s4", user: "other"},
				{at: time.Hour, session: "s4"},
			},
		},
		{
			name:   "a locked-out request does not spend the rate",
			limits: flood.Limits{Session: flood.Rate{N: 1, Per: time.Hour}, SessionLockout: flood.Lockout{After: 1, For: time.Minute}},
			steps: []step{
				{do: "deny"},
				{want: flood.ErrLockedOut, scope: flood.ScopeSession},
				{want: flood.ErrLockedOut, scope: flood.ScopeSession},
				{at: time.Minute},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newClock()
			lim := newLimiter(t, memory.New(nil), tt.limits, c)
			for i, s := range tt.steps {
				if s.session == "" {
					s.session = "s1"
				}
				if s.user == "" {
					s.user = "alice"
				}
				c.Set(t0.Add(s.at))
				switch s.do {
				case "deny":
					require.NoError(t, lim.Decided(ctx, req(s.session, s.user), false), "step %d", i)
					continue
				case "approve":
					require.NoError(t, lim.Decided(ctx, req(s.session, s.user), true), "step %d", i)
					continue
				}
				err := lim.Admit(ctx, req(s.session, s.user))
				if s.want == nil {
					assert.NoError(t, err, "step %d", i)
					continue
				}
				require.ErrorIs(t, err, s.want, "step %d", i)
				var le *flood.LimitError
				require.ErrorAs(t, err, &le, "step %d", i)
				assert.Equal(t, s.scope, le.Scope, "step %d", i)
				assert.Positive(t, le.RetryAfter, "step %d", i)
				if s.retry != 0 {
					assert.Equal(t, s.retry, le.RetryAfter, "step %d", i)
				}
			}
		})
	}
}

// TestRetryAfterIsEnough checks the hint against the limiter itself: a
// request retried after RetryAfter, with nobody else asking, is admitted,
// and one retried a second earlier is not.
func TestRetryAfterIsEnough(t *testing.T) {
	for _, n := range []int64{1, 2, 5, 17} {
		for _, offset := range []time.Duration{0, 7 * time.Second, 59 * time.Second} {
			ctx := context.Background()
			c := newClock()
			c.Set(t0.Add(offset))
			lim := newLimiter(t, memory.New(nil), onlySession(n), c)
			require.Equal(t, int(n), admitN(t, lim, int(n), "s", "u"))
			err := lim.Admit(ctx, req("s", "u"))
			var le *flood.LimitError
			require.ErrorAs(t, err, &le)
			start := c.Now()
			c.Set(start.Add(le.RetryAfter - time.Second))
			assert.ErrorIs(t, lim.Admit(ctx, req("s", "u")), flood.ErrRateLimited, "n=%d offset=%v", n, offset)
			c.Set(start.Add(le.RetryAfter))
			assert.NoError(t, lim.Admit(ctx, req("s", "u")), "n=%d offset=%v retry=%v", n, offset, le.RetryAfter)
		}
	}
}

func TestUserRefusalRefundsSession(t *testing.T) {
	ctx := context.Background()
	st := memory.New(nil)
	c := newClock()
	both := newLimiter(t, st, flood.Limits{Session: flood.Rate{N: 2, Per: time.Minute}, User: flood.Rate{N: 1, Per: time.Minute}}, c)
	require.NoError(t, both.Admit(ctx, req("s1", "alice")))
	require.ErrorIs(t, both.Admit(ctx, req("s1", "alice")), flood.ErrRateLimited)

	// Had the refused request kept its session count, s1 would be at 2.
	sessionOnly := newLimiter(t, st, onlySession(2), c)
	assert.NoError(t, sessionOnly.Admit(ctx, req("s1", "alice")))
	assert.ErrorIs(t, sessionOnly.Admit(ctx, req("s1", "alice")), flood.ErrRateLimited)
}

// TestRefusalRefundsEveryScope: a request refused by the last limit it
// meets (an approver's inflow) gives back what it took from the session,
// the agent and the user, so a refused request spends nobody's rate.
func TestRefusalRefundsEveryScope(t *testing.T) {
	ctx := context.Background()
	three := flood.Rate{N: 3, Per: time.Minute}
	lim := newLimiter(t, memory.New(nil), flood.Limits{Session: three, Agent: three, User: three,
		ApproverInflow: flood.Rate{N: 2, Per: time.Minute}}, newClock())
	r := flood.Request{User: "alice", Agent: "agent:a", Session: "s1", Approvers: []string{"x"}}
	require.NoError(t, lim.Admit(ctx, r))
	require.NoError(t, lim.Admit(ctx, r))
	var le *flood.LimitError
	for range 5 {
		require.ErrorAs(t, lim.Admit(ctx, r), &le)
		require.Equal(t, flood.ScopeApprover, le.Scope)
	}
	r.Approvers = []string{"y", "y"}
	require.NoError(t, lim.Admit(ctx, r), "the refusals spent no session, agent or user rate")
	r.Approvers = []string{"z"}
	require.ErrorAs(t, lim.Admit(ctx, r), &le)
	assert.Equal(t, flood.ScopeSession, le.Scope)

	// Named twice, y was counted once: one more prompt may reach it.
	bob := flood.Request{User: "bob", Agent: "agent:a", Session: "s1", Approvers: []string{"y"}}
	require.NoError(t, lim.Admit(ctx, bob))
	require.ErrorAs(t, lim.Admit(ctx, bob), &le)
	assert.Equal(t, flood.ScopeApprover, le.Scope)
}

func TestFailsClosed(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	// An admission with the default limits and one approver makes 2 store
	// calls: one read of the three runs of denials, then one batch
	// counting the session, the agent, the user and the approver (and
	// reading their previous windows).
	const calls = 1 + 1
	for left := range calls {
		f := &failing{Store: memory.New(nil), left: left}
		lim := newLimiter(t, f, flood.Limits{}, c)
		err := lim.Admit(ctx, req("s1", "alice"))
		assert.ErrorIs(t, err, flood.ErrUnavailable, "failure after %d calls", left)
		assert.ErrorIs(t, err, errBroken, "failure after %d calls", left)
	}
	f := &failing{Store: memory.New(nil), left: calls}
	assert.NoError(t, newLimiter(t, f, flood.Limits{}, c).Admit(ctx, req("s1", "alice")), "control: enough calls")

	for left := range 3 { // a denial makes three streak calls
		f := &failing{Store: memory.New(nil), left: left}
		lim := newLimiter(t, f, flood.Limits{}, c)
		assert.ErrorIs(t, lim.Decided(ctx, req("s1", "alice"), false), flood.ErrUnavailable)
	}
	// An approval after a denial reads the three runs at once, then ends
	// each: four calls.
	for left := range 4 {
		f := &failing{Store: memory.New(nil), left: 3}
		lim := newLimiter(t, f, flood.Limits{}, c)
		require.NoError(t, lim.Decided(ctx, req("s1", "alice"), false))
		f.left = left
		assert.ErrorIs(t, lim.Decided(ctx, req("s1", "alice"), true), flood.ErrUnavailable, "failure after %d calls", left)
	}

	closed := memory.New(nil)
	require.NoError(t, closed.Close())
	err := newLimiter(t, closed, flood.Limits{}, c).Admit(ctx, req("s1", "alice"))
	assert.ErrorIs(t, err, flood.ErrUnavailable)
	assert.ErrorIs(t, err, store.ErrClosed)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err = newLimiter(t, memory.New(nil), flood.Limits{}, c).Admit(cancelled, req("s1", "alice"))
	assert.ErrorIs(t, err, flood.ErrUnavailable)
	assert.ErrorIs(t, err, context.Canceled)

	lim := newLimiter(t, memory.New(nil), flood.Limits{}, c)
	tooMany := make([]string, flood.MaxApprovers+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("user:%d", i)
	}
	full := flood.Request{User: "alice", Agent: "agent:a", Session: "s1", Approvers: []string{"alice"}}
	for _, r := range []flood.Request{
		{Agent: "agent:a", Session: "s1", Approvers: []string{"alice"}},
		{User: "alice", Session: "s1", Approvers: []string{"alice"}},
		{User: "alice", Agent: "agent:a", Approvers: []string{"alice"}},
	} {
		assert.ErrorIs(t, lim.Admit(ctx, r), flood.ErrUnavailable)
		assert.ErrorIs(t, lim.Decided(ctx, r, false), flood.ErrUnavailable)
		assert.ErrorIs(t, lim.Decided(ctx, r, true), flood.ErrUnavailable)
	}
	for _, approvers := range [][]string{nil, {}, {""}, {"alice", ""}, tooMany} {
		r := full
		r.Approvers = approvers
		assert.ErrorIs(t, lim.Admit(ctx, r), flood.ErrUnavailable, "%d approvers", len(approvers))
		// A decision needs no approvers.
		assert.NoError(t, lim.Decided(ctx, r, true))
	}
	r := full
	r.Approvers = tooMany[:flood.MaxApprovers]
	assert.NoError(t, lim.Admit(ctx, r), "control: as many approvers as allowed")
}

func TestLongIDsFit(t *testing.T) {
	// Sessions and users up to the store's key size are valid ticket
	// fields; their counter keys must fit too.
	long := string(make([]byte, store.MaxKeySize))
	lim := newLimiter(t, memory.New(nil), flood.Limits{}, newClock())
	require.NoError(t, lim.Admit(context.Background(), req(long, long)))
	require.NoError(t, lim.Decided(context.Background(), req(long, long), false))
}

func TestLimitErrorText(t *testing.T) {
	err := error(&flood.LimitError{Err: flood.ErrLockedOut, Scope: flood.ScopeUser, RetryAfter: time.Minute})
	assert.Equal(t, "flood: locked out after repeated denials (user); retry after 1m0s", err.Error())
	assert.True(t, errors.Is(err, flood.ErrLockedOut))
	assert.False(t, errors.Is(err, flood.ErrRateLimited))
	assert.ErrorIs(t, flood.ErrPendingCap, store.ErrPendingCap)
}
