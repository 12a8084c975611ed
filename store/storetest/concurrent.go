package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// race runs f(0..n-1) on n goroutines released together and returns the
// errors by index.
func race(n int, f func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = f(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// tally counts nil errors and errors matching want; others are returned.
func tally(errs []error, want error) (ok, refused int, other []error) {
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, want):
			refused++
		default:
			other = append(other, err)
		}
	}
	return ok, refused, other
}

func testConcurrent(t *testing.T, newStore func(*testing.T) store.Store, n int) {
	ctx := context.Background()
	t.Run("Consume", func(t *testing.T) {
		s := newStore(t)
		a := parkApproved(t, s, 1)
		errs := race(n, func(i int) error {
			_, err := s.Consume(ctx, a.ID, fmt.Sprintf("key-%d", i), t0.Add(time.Minute))
			return err
		})
		ok, refused, other := tally(errs, store.ErrConsumed)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "exactly one consume wins")
		assert.Equal(t, n-1, refused)
		got, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Executing, got.State)
		for i, err := range errs {
			if err == nil {
				assert.Equal(t, fmt.Sprintf("key-%d", i), got.IdempotencyKey, "the winner's key is recorded")
			}
		}
	})
	t.Run("Resolve", func(t *testing.T) {
		s := newStore(t)
		a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
		require.NoError(t, err)
		errs := race(n, func(i int) error {
			to := store.Approved
			if i%2 == 1 {
				to = store.Denied
			}
			_, err := s.Resolve(ctx, a.ID, store.Resolution{To: to, Approver: fmt.Sprint(i), At: t0})
			return err
		})
		ok, refused, other := tally(errs, store.ErrResolved)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "exactly one resolve wins")
		assert.Equal(t, n-1, refused)
	})
	t.Run("Audit", func(t *testing.T) {
		s := newStore(t)
		errs := race(n, func(i int) error {
			_, err := s.AppendAudit(ctx, Record(fmt.Sprintf("task-%d", i), t0))
			return err
		})
		ok, _, other := tally(errs, nil)
		assert.Empty(t, other)
		assert.Equal(t, n, ok)
		all, err := s.AuditRange(ctx, t0, t0.Add(time.Second))
		require.NoError(t, err)
		assert.Len(t, all, n)
		assert.NoError(t, receipt.VerifyChain(all, canon.Digest{}), "concurrent appends leave one unbroken chain")
	})
	t.Run("PendingCap", func(t *testing.T) {
		const limit = 5
		s := newStore(t)
		errs := race(n, func(i int) error {
			_, _, err := s.Park(ctx, Ticket("s1", fmt.Sprintf("u%d", i), i), store.Caps{PerSession: limit})
			return err
		})
		ok, refused, other := tally(errs, store.ErrPendingCap)
		assert.Empty(t, other)
		assert.Equal(t, limit, ok, "exactly the cap is admitted")
		assert.Equal(t, n-limit, refused)
		p, err := s.Pending(ctx, store.Filter{Session: "s1"})
		require.NoError(t, err)
		assert.Len(t, p, limit)
	})
	t.Run("Merge", func(t *testing.T) {
		s := newStore(t)
		ids := make([]string, n)
		errs := race(n, func(i int) error {
			a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
			ids[i] = a.ID
			return err
		})
		ok, _, other := tally(errs, nil)
		assert.Empty(t, other)
		assert.Equal(t, n, ok)
		for _, id := range ids {
			assert.Equal(t, ids[0], id, "concurrent duplicates merge into one ticket")
		}
		a, err := s.Get(ctx, ids[0])
		require.NoError(t, err)
		assert.Equal(t, n-1, a.Merged)
	})
	t.Run("Grant", func(t *testing.T) {
		s := newStore(t)
		g := grant("g1")
		g.Remaining = 10
		require.NoError(t, s.PutGrant(ctx, g))
		errs := race(n, func(int) error {
			_, err := s.UseGrant(ctx, "g1", t0)
			return err
		})
		ok, refused, other := tally(errs, store.ErrGrantUsedUp)
		assert.Empty(t, other)
		assert.Equal(t, min(10, n), ok, "a grant is used exactly its remaining times")
		assert.Equal(t, n-min(10, n), refused)
	})
	t.Run("SignCount", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.PutCredential(ctx, credential("cred-1", "alice", 1)))
		errs := race(n, func(int) error { return s.AdvanceSignCount(ctx, []byte("cred-1"), 2) })
		ok, refused, other := tally(errs, store.ErrCounter)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok, "a replayed counter is accepted once")
		assert.Equal(t, n-1, refused)
	})
	t.Run("Invite", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateInvite(ctx, invite(1)))
		errs := race(n, func(int) error {
			_, err := s.RedeemInvite(ctx, invite(1).TokenHash, t0)
			return err
		})
		ok, refused, other := tally(errs, store.ErrConsumed)
		assert.Empty(t, other)
		assert.Equal(t, 1, ok)
		assert.Equal(t, n-1, refused)
	})
	t.Run("Counters", func(t *testing.T) {
		s := newStore(t)
		errs := race(n, func(int) error {
			_, err := s.AddCount(ctx, "k", t0, 1)
			if err != nil {
				return err
			}
			_, err = s.IncrStreak(ctx, "k", t0)
			return err
		})
		_, _, other := tally(errs, nil)
		assert.Empty(t, other)
		got, err := s.AddCount(ctx, "k", t0, 0)
		require.NoError(t, err)
		assert.Equal(t, int64(n), got, "no add is lost")
		st, err := s.GetStreak(ctx, "k")
		require.NoError(t, err)
		assert.Equal(t, n, st.Count, "no increment is lost")
	})
}
