package flood_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// t0 is aligned to every window the tests use.
var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// clock is a settable clock shared by limiters, like a fleet of replicas
// with synchronized clocks.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

func newLimiter(t testing.TB, counters store.Counters, l flood.Limits, c *clock) *flood.Limiter {
	t.Helper()
	lim, err := flood.New(counters, l, c.Now)
	require.NoError(t, err)
	return lim
}

// req is a request of user's agent "agent:a" in session, prompting user.
func req(session, user string) flood.Request {
	return flood.Request{User: user, Agent: "agent:a", Session: session, Approvers: []string{user}}
}

// off is limits with every rate and lockout off; tests turn on the ones
// they are about.
var off = flood.Limits{
	Session: flood.Rate{N: -1}, Agent: flood.Rate{N: -1}, User: flood.Rate{N: -1},
	ApproverInflow: flood.Rate{N: -1},
	SessionLockout: flood.Lockout{After: -1}, AgentLockout: flood.Lockout{After: -1},
	UserLockout: flood.Lockout{After: -1},
}

// onlySession is a limit of n per minute on sessions and nothing else.
func onlySession(n int64) flood.Limits {
	l := off
	l.Session = flood.Rate{N: n, Per: time.Minute}
	return l
}

// admitN asks n times and returns how many were admitted; any refusal
// other than a rate limit fails the test.
func admitN(t testing.TB, lim *flood.Limiter, n int, session, user string) int {
	t.Helper()
	admitted := 0
	for range n {
		err := lim.Admit(context.Background(), req(session, user))
		if err == nil {
			admitted++
			continue
		}
		require.ErrorIs(t, err, flood.ErrRateLimited)
	}
	return admitted
}

// failing is a store whose counters fail after a number of calls.
type failing struct {
	*memory.Store
	mu   sync.Mutex
	left int
}

var errBroken = errors.New("broken disk")

func (f *failing) spend() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left <= 0 {
		return errBroken
	}
	f.left--
	return nil
}

func (f *failing) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	if err := f.spend(); err != nil {
		return nil, err
	}
	return f.Store.AddCounts(ctx, ops)
}

func (f *failing) AddCount(ctx context.Context, key string, w time.Time, d int64) (int64, error) {
	if err := f.spend(); err != nil {
		return 0, err
	}
	return f.Store.AddCount(ctx, key, w, d)
}

func (f *failing) GetStreak(ctx context.Context, key string) (store.Streak, error) {
	if err := f.spend(); err != nil {
		return store.Streak{}, err
	}
	return f.Store.GetStreak(ctx, key)
}

func (f *failing) GetStreaks(ctx context.Context, keys []string) ([]store.Streak, error) {
	if err := f.spend(); err != nil {
		return nil, err
	}
	return f.Store.GetStreaks(ctx, keys)
}

func (f *failing) IncrStreak(ctx context.Context, key string, at time.Time) (int, error) {
	if err := f.spend(); err != nil {
		return 0, err
	}
	return f.Store.IncrStreak(ctx, key, at)
}

func (f *failing) ResetStreak(ctx context.Context, key string) error {
	if err := f.spend(); err != nil {
		return err
	}
	return f.Store.ResetStreak(ctx, key)
}
