package storetest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/audit"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Clock is a fake clock for [RunClock]: safe for concurrent use, it moves
// only when told.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading at.
func NewClock(at time.Time) *Clock { return &Clock{now: at} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to at, forwards or back.
func (c *Clock) Set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = at
}

// RunClock runs the tests that need to set the store's clock, for backends
// whose clock is injected (the embedded ones; PostgreSQL's is the
// database's and cannot be set). newStore must return a new, empty store
// whose clock is clock.
//
//   - AuditTimes: the clock steps back and forth while decisions and
//     appends run; every record's time is the clock's at its append but
//     never before its predecessor's, so times never decrease, and every
//     export by time window verifies.
//   - SlowGate: a gate whose clock is ten minutes slow sees a ticket as
//     live after the store's clock expired it; its approval, consume and
//     grant use are refused with [store.ErrClockSkew].
func RunClock(t *testing.T, newStore func(t *testing.T, clock func() time.Time) store.Store) {
	t.Run("AuditTimes", func(t *testing.T) {
		start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		c := NewClock(start)
		s := newStore(t, c.Now)
		rng := rand.New(rand.NewPCG(3, 4))
		var stamps []int64 // the clock at each append
		for i := 0; i < 60; i++ {
			c.Set(start.Add(time.Duration(rng.IntN(20_000)-5_000) * time.Millisecond))
			stamps = append(stamps, c.Now().UnixMilli())
			switch i % 3 {
			case 0:
				_, err := s.AppendAudit(t.Context(), Record(fmt.Sprintf("task-%d", i), c.Now()))
				require.NoError(t, err)
			case 1:
				_, _, err := s.Park(t.Context(), TicketAt("s1", "u1", i, c.Now()), store.Caps{}, fixture.Note("park"))
				require.NoError(t, err)
			case 2:
				a := TicketAt("s2", "u1", i, c.Now())
				a.State, a.Approver = store.Approved, "policy"
				_, _, err := s.Park(t.Context(), a, store.Caps{}, fixture.Note("allow"))
				require.NoError(t, err)
			}
		}
		all := fixture.Chain(t, s)
		require.Len(t, all, len(stamps))
		floor := int64(0)
		for i, r := range all {
			floor = max(floor, stamps[i])
			assert.Equal(t, floor, r.Time, "record %d: the clock at append, never before its predecessor", i)
		}
		audit.TimeWindows(t, s)
	})
	t.Run("SlowGate", func(t *testing.T) {
		real := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		slow := real.Add(-10 * time.Minute)
		c := NewClock(real)
		s := newStore(t, c.Now)
		// Both tickets expired a minute ago by the store's clock; the slow
		// gate believes they have nine minutes left.
		in := TicketAt("s1", "u1", 1, real.Add(-fixture.TTL-time.Minute))
		p, _, err := s.Park(t.Context(), in, store.Caps{}, nil)
		require.NoError(t, err)
		_, err = s.Resolve(t.Context(), p.ID, fixture.Approve(slow), nil)
		assert.ErrorIs(t, err, store.ErrClockSkew, "the slow gate cannot approve after the real expiry")

		c.Set(in.CreatedAt.Add(time.Minute))
		a, _, err := s.Park(t.Context(), TicketAt("s1", "u1", 2, in.CreatedAt), store.Caps{}, nil)
		require.NoError(t, err)
		_, err = s.Resolve(t.Context(), a.ID, fixture.Approve(c.Now()), nil)
		require.NoError(t, err)
		c.Set(real)
		_, err = s.Consume(t.Context(), a.ID, fixture.Claim("k", "slow-gate", slow), nil)
		assert.ErrorIs(t, err, store.ErrClockSkew, "the slow gate cannot execute after the real expiry")
		_, err = s.Consume(t.Context(), a.ID, fixture.Claim("k", "gate", real), nil)
		assert.ErrorIs(t, err, store.ErrExpired, "a gate on time sees it expired")
		_, err = s.Vote(t.Context(), p.ID, fixture.Vote("bob", slow), 2, "two", nil)
		assert.ErrorIs(t, err, store.ErrClockSkew, "the slow gate cannot vote after the real expiry")
		_, err = s.Vote(t.Context(), p.ID, fixture.Vote("bob", real), 2, "two", nil)
		assert.ErrorIs(t, err, store.ErrExpired, "a gate on time sees the vote come too late")

		g := fixture.Grant("g1")
		g.CreatedAt, g.ExpiresAt = real.Add(-time.Hour), real.Add(-time.Minute)
		require.NoError(t, s.PutGrant(t.Context(), g))
		_, err = s.UseGrant(t.Context(), "g1", slow)
		assert.ErrorIs(t, err, store.ErrClockSkew, "the slow gate cannot use an expired grant")
	})
}

// testClock checks the store's clock and that every deciding method
// refuses a time off it by more than store.MaxSkew, in either direction,
// and accepts one within it.
func testClock(t *testing.T, newStore func(*testing.T) store.Store) {
	t.Run("Now", func(t *testing.T) {
		s := newStore(t)
		a := fixture.Now(t, s)
		b := fixture.Now(t, s)
		assert.False(t, b.Before(a), "the store's clock does not run backwards between two reads")
		assert.False(t, a.IsZero())
	})
	off := []time.Duration{store.MaxSkew + time.Second, -store.MaxSkew - time.Second, time.Hour, -time.Hour, -24 * time.Hour}
	within := []time.Duration{0, store.MaxSkew / 2, -store.MaxSkew / 2}
	methods := []struct {
		name string
		// call runs the method at the store's clock plus d, on a fresh
		// subject.
		call func(t *testing.T, s store.Store, d time.Duration) error
	}{
		{"Resolve", func(t *testing.T, s store.Store, d time.Duration) error {
			at := fixture.Now(t, s)
			p, _, err := s.Park(t.Context(), TicketAt("s1", "u1", 1, at.Add(-time.Minute)), store.Caps{}, nil)
			require.NoError(t, err)
			_, err = s.Resolve(t.Context(), p.ID, fixture.Approve(at.Add(d)), nil)
			return err
		}},
		{"Vote", func(t *testing.T, s store.Store, d time.Duration) error {
			at := fixture.Now(t, s)
			p, _, err := s.Park(t.Context(), TicketAt("s1", "u1", 1, at.Add(-time.Minute)), store.Caps{}, nil)
			require.NoError(t, err)
			_, err = s.Vote(t.Context(), p.ID, fixture.Vote("bob", at.Add(d)), 2, "two", nil)
			return err
		}},
		{"Consume", func(t *testing.T, s store.Store, d time.Duration) error {
			a := fixture.ParkApproved(t, s, 1)
			_, err := s.Consume(t.Context(), a.ID, fixture.Claim("k", "gate-1", fixture.Now(t, s).Add(d)), nil)
			return err
		}},
		{"Reclaim", func(t *testing.T, s store.Store, d time.Duration) error {
			at := fixture.Now(t, s)
			a := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(-time.Second))
			// A lease that ended a day ago by the caller's clock, so only
			// the skew check can refuse.
			_, err := s.Reclaim(t.Context(), a.ID, 1, store.Claim{Owner: "gate-2", At: at.Add(d),
				LeaseUntil: at.Add(d).Add(fixture.Lease)}, nil)
			return err
		}},
		{"UseGrant", func(t *testing.T, s store.Store, d time.Duration) error {
			at := fixture.Now(t, s)
			g := fixture.Grant("g1")
			g.CreatedAt, g.ExpiresAt = at.Add(-48*time.Hour), at.Add(48*time.Hour)
			require.NoError(t, s.PutGrant(t.Context(), g))
			_, err := s.UseGrant(t.Context(), "g1", at.Add(d))
			return err
		}},
		{"ParkGranted", func(t *testing.T, s store.Store, d time.Duration) error {
			at := fixture.Now(t, s)
			g := fixture.Grant("g1")
			g.CreatedAt, g.ExpiresAt = at.Add(-48*time.Hour), at.Add(48*time.Hour)
			require.NoError(t, s.PutGrant(t.Context(), g))
			a := TicketAt("s1", "u1", 1, at.Add(d))
			a.State, a.Approver = store.Approved, "grant:g1"
			_, _, err := s.ParkGranted(t.Context(), a, "g1", nil)
			return err
		}},
	}
	for _, m := range methods {
		t.Run(m.name, func(t *testing.T) {
			for _, d := range off {
				s := newStore(t)
				err := m.call(t, s, d)
				if assert.ErrorIs(t, err, store.ErrClockSkew, "%v off the store's clock", d) {
					assert.NotContains(t, err.Error(), "20", "the error names no time")
				}
			}
			for _, d := range within {
				s := newStore(t)
				assert.NoError(t, m.call(t, s, d), "%v off the store's clock", d)
			}
		})
	}
}
