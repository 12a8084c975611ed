// Package concurrent races goroutines on one store for the conformance
// suite: random interleavings of the execution methods over a few tickets,
// and races on one ticket's consume, reclaim, finish and revocation, one
// audit chain, one pending cap, one grant's last use, one sign counter and
// one invite. Each race has exactly the winners its rule allows, and one
// audit row per winning decision.
package concurrent

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Run races n goroutines (at least 2) on one store: random interleavings of
// Consume, Renew, Reclaim, Finish and revocation, then one ticket's
// consume, reclaim, finish and revocation, one resolve, one audit chain,
// one pending cap, one merge, one grant's uses and last use, one sign
// counter, one invite and the counters. Each race has exactly the winners
// its rule allows and one row per winning decision.
func Run(t *testing.T, newStore func(*testing.T) store.Store, n int) {
	t.Run("Interleavings", func(t *testing.T) { testInterleavings(t, newStore, min(n, 16)) })
	t.Run("Consume", func(t *testing.T) {
		s := newStore(t)
		a := fixture.ParkApproved(t, s, 1)
		at := fixture.Now(t, s)
		errs := fixture.Race(n, func(i int) error {
			_, err := s.Consume(t.Context(), a.ID, fixture.Claim(fmt.Sprintf("key-%d", i), fmt.Sprintf("gate-%d", i), at), fixture.Note("consume"))
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrConsumed)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "exactly one consume wins")
		assert.Equal(t, n-1, refused)
		got, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Executing, got.State)
		for i, err := range errs {
			if err == nil {
				assert.Equal(t, fmt.Sprintf("key-%d", i), got.IdempotencyKey, "the winner's key is recorded")
				assert.Equal(t, fmt.Sprintf("gate-%d", i), got.Owner, "the winner owns it")
			}
		}
		assert.Len(t, fixture.Chain(t, s), 3, "park, approve and one consume: one row per decision")
	})
	t.Run("Reclaim", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		a := fixture.ParkExecuting(t, s, 1, "gate-0", at.Add(-time.Second))
		errs := fixture.Race(n, func(i int) error {
			_, err := s.Reclaim(t.Context(), a.ID, 1, fixture.Claim("", fmt.Sprintf("gate-%d", i+1), at), fixture.Note("reclaim"))
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrFenced)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "exactly one reclaim wins")
		assert.Equal(t, n-1, refused)
		got, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, int64(2), got.Fence)
		for i, err := range errs {
			if err == nil {
				assert.Equal(t, fmt.Sprintf("gate-%d", i+1), got.Owner)
			}
		}
		assert.Len(t, fixture.Chain(t, s), 4)
	})
	t.Run("StaleFinish", func(t *testing.T) {
		// The ticket was reclaimed twice; owners holding fences 1, 2 and 3
		// race to finish it, stale ones many times over: only fence 3 wins.
		s := newStore(t)
		at := fixture.Now(t, s)
		a := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(-time.Second))
		_, err := s.Reclaim(t.Context(), a.ID, 1, store.Claim{Owner: "gate-2", At: at.Add(-time.Second),
			LeaseUntil: at.Add(-time.Second / 2)}, nil)
		require.NoError(t, err)
		_, err = s.Reclaim(t.Context(), a.ID, 2, fixture.Claim("", "gate-3", at), nil)
		require.NoError(t, err)
		errs := fixture.Race(n, func(i int) error {
			fence := int64(1 + i%3)
			_, err := s.Finish(t.Context(), a.ID, fence, store.Outcome{State: store.Done,
				Result: []byte(fmt.Sprintf(`{"fence":%d}`, fence)), At: at}, fixture.Note("finish"))
			if err == nil && fence != 3 {
				return fmt.Errorf("fence %d finished", fence)
			}
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrFenced)
		assert.Empty(t, other, "no stale owner finishes")
		assert.Equal(t, 1, ok, "exactly one finish wins")
		assert.Equal(t, n-1, refused)
		got, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, []byte(`{"fence":3}`), got.Result, "the current owner's outcome stands")
	})
	t.Run("RevokeOrConsume", func(t *testing.T) {
		s := newStore(t)
		a := fixture.ParkApproved(t, s, 1)
		at := fixture.Now(t, s)
		errs := fixture.Race(n, func(i int) error {
			if i%2 == 0 {
				_, err := s.Resolve(t.Context(), a.ID, store.Resolution{To: store.Revoked, At: at}, fixture.Note("revoke"))
				return err
			}
			_, err := s.Consume(t.Context(), a.ID, fixture.Claim("k", "gate-1", at), fixture.Note("consume"))
			return err
		})
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrResolved), errors.Is(err, store.ErrConsumed), errors.Is(err, store.ErrRevoked):
			default:
				t.Errorf("unexpected: %v", err)
			}
		}
		assert.Equal(t, 1, wins, "a ticket is revoked or consumed, never both")
		assert.Len(t, fixture.Chain(t, s), 3)
	})
	t.Run("Resolve", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		a, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, nil)
		require.NoError(t, err)
		errs := fixture.Race(n, func(i int) error {
			to := store.Approved
			if i%2 == 1 {
				to = store.Denied
			}
			_, err := s.Resolve(t.Context(), a.ID, store.Resolution{To: to, Approver: fmt.Sprint(i), At: at}, fixture.Note("resolve"))
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrResolved)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "exactly one resolve wins")
		assert.Equal(t, n-1, refused)
		assert.Len(t, fixture.Chain(t, s), 1)
	})
	t.Run("Audit", func(t *testing.T) {
		s := newStore(t)
		errs := fixture.Race(n, func(i int) error {
			if i%2 == 0 {
				_, err := s.AppendAudit(t.Context(), fixture.Record(fmt.Sprintf("task-%d", i), fixture.T0))
				return err
			}
			_, _, err := s.Park(t.Context(), fixture.Ticket(fmt.Sprintf("s%d", i), "u1", i), store.Caps{}, fixture.Note("park"))
			return err
		})
		ok, _, other := fixture.Tally(errs, nil)
		assert.Empty(t, other)
		assert.Equal(t, n, ok)
		assert.Len(t, fixture.Chain(t, s), n, "concurrent appends and decisions leave one unbroken chain")
	})
	t.Run("PendingCap", func(t *testing.T) {
		const limit = 5
		s := newStore(t)
		errs := fixture.Race(n, func(i int) error {
			_, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", i), store.Caps{PerSession: limit}, fixture.Note("park"))
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrPendingCap)
		assert.Empty(t, other)
		assert.Equal(t, limit, ok, "exactly the cap is admitted")
		assert.Equal(t, n-limit, refused)
		p, _, err := s.List(t.Context(), store.Filter{Session: "s1", States: []store.State{store.Pending}})
		require.NoError(t, err)
		assert.Len(t, p, limit)
		assert.Len(t, fixture.Chain(t, s), limit)
	})
	t.Run("Merge", func(t *testing.T) {
		s := newStore(t)
		ids := make([]string, n)
		errs := fixture.Race(n, func(i int) error {
			a, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), store.Caps{}, fixture.Note("park"))
			ids[i] = a.ID
			return err
		})
		ok, _, other := fixture.Tally(errs, nil)
		assert.Empty(t, other)
		assert.Equal(t, n, ok)
		for _, id := range ids {
			assert.Equal(t, ids[0], id, "concurrent duplicates merge into one ticket")
		}
		a, err := s.Get(t.Context(), ids[0])
		require.NoError(t, err)
		assert.Equal(t, n-1, a.Merged)
		assert.Len(t, fixture.Chain(t, s), n, "one row per proposal")
	})
	t.Run("Grant", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		g := fixture.Grant("g1")
		g.Remaining, g.CreatedAt, g.ExpiresAt = 10, at, at.Add(fixture.TTL)
		require.NoError(t, s.PutGrant(t.Context(), g))
		errs := fixture.Race(n, func(int) error {
			_, err := s.UseGrant(t.Context(), "g1", at)
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrGrantUsedUp)
		assert.Empty(t, other)
		assert.Equal(t, min(10, n), ok, "a grant is used exactly its remaining times")
		assert.Equal(t, n-min(10, n), refused)
	})
	t.Run("ParkGrantedLastUse", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		g := fixture.Grant("g1")
		g.Remaining, g.CreatedAt, g.ExpiresAt = 1, at, at.Add(fixture.TTL)
		require.NoError(t, s.PutGrant(t.Context(), g))
		errs := fixture.Race(n, func(i int) error {
			a := fixture.TicketAt("s1", "u1", i, at)
			a.State, a.Approver = store.Approved, "grant:g1"
			_, _, err := s.ParkGranted(t.Context(), a, "g1", fixture.Note("grant"))
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrGrantUsedUp)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "the last use pays for exactly one ticket")
		assert.Equal(t, n-1, refused)
		page, _, err := s.List(t.Context(), store.Filter{})
		require.NoError(t, err)
		assert.Len(t, page, 1, "refused uses store no ticket")
		assert.Len(t, fixture.Chain(t, s), 1)
	})
	t.Run("SignCount", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.PutCredential(t.Context(), fixture.Credential("cred-1", "alice", 1)))
		errs := fixture.Race(n, func(int) error { return s.AdvanceSignCount(t.Context(), []byte("cred-1"), 2) })
		ok, refused, other := fixture.Tally(errs, store.ErrCounter)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "a replayed counter is accepted once")
		assert.Equal(t, n-1, refused)
	})
	t.Run("Invite", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateInvite(t.Context(), fixture.Invite(1)))
		errs := fixture.Race(n, func(int) error {
			_, err := s.RedeemInvite(t.Context(), fixture.Invite(1).TokenHash, fixture.T0)
			return err
		})
		ok, refused, other := fixture.Tally(errs, store.ErrConsumed)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok)
		assert.Equal(t, n-1, refused)
	})
	t.Run("Counters", func(t *testing.T) {
		s := newStore(t)
		errs := fixture.Race(n, func(int) error {
			_, err := s.AddCount(t.Context(), "k", fixture.T0, 1)
			if err != nil {
				return err
			}
			_, err = s.IncrStreak(t.Context(), "k", fixture.T0)
			return err
		})
		_, _, other := fixture.Tally(errs, nil)
		assert.Empty(t, other)
		got, err := s.AddCount(t.Context(), "k", fixture.T0, 0)
		require.NoError(t, err)
		assert.Equal(t, int64(n), got, "no add is lost")
		st, err := s.GetStreak(t.Context(), "k")
		require.NoError(t, err)
		assert.Equal(t, n, st.Count, "no increment is lost")
	})
}
