package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
)

// replicas opens n stores on schema, each with its own connection pool, as
// n gate replicas sharing one database would.
func replicas(t *testing.T, schema string, n int) []*postgres.Store {
	t.Helper()
	out := make([]*postgres.Store, n)
	for i := range out {
		s, err := postgres.Open(t.Context(), dsn(t), &postgres.Options{Schema: schema, MaxConns: 4})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		out[i] = s
	}
	return out
}

// race runs call(replica, racer) for racers goroutines on every replica,
// released together, and returns the errors by replica and racer.
func race(reps []*postgres.Store, racers int, call func(s *postgres.Store, r, i int) error) [][]error {
	errs := make([][]error, len(reps))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for r, s := range reps {
		errs[r] = make([]error, racers)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[r][i] = call(s, r, i)
			}()
		}
	}
	close(start)
	wg.Wait()
	return errs
}

// clockOf reads the database's clock through s, to the millisecond, for
// goroutines that cannot fail the test: an error gives the zero time,
// which the call it is passed to refuses with store.ErrInvalid.
func clockOf(s *postgres.Store) time.Time {
	n, err := s.Now(context.Background())
	if err != nil {
		return time.Time{}
	}
	return n.Truncate(time.Millisecond)
}

// winners counts the nil errors and checks that every other one wraps
// one of refusals.
func winners(t *testing.T, errs [][]error, refusals ...error) int {
	t.Helper()
	n := 0
	for r, row := range errs {
		for i, err := range row {
			if err == nil {
				n++
				continue
			}
			ok := false
			for _, want := range refusals {
				ok = ok || errors.Is(err, want)
			}
			assert.True(t, ok, "replica %d racer %d: %v", r, i, err)
		}
	}
	return n
}

// TestReplicasRace races four replicas, each its own connection pool,
// eight goroutines each, on one ticket through its whole execution:
// Consume, rounds of Reclaim in which some racers hold a stale fencing
// token, and Finish by every owner the ticket ever had. Exactly one call
// wins each step; the audit chain holds one row per winning call and
// verifies.
func TestReplicasRace(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	reps := replicas(t, schema, 4)
	const racers = 8
	a := approved(t, reps[0], 1)
	decisions := 2 // park and approve

	t.Run("Consume", func(t *testing.T) {
		errs := race(reps, racers, func(s *postgres.Store, r, i int) error {
			at := clockOf(s)
			// A lease that lapses at once, so that Reclaim can take it.
			_, err := s.Consume(ctx, a.ID, store.Claim{Key: "key-" + a.ID, Owner: fmt.Sprintf("gate-%d-%d", r, i),
				At: at, LeaseUntil: at.Add(time.Millisecond)}, note("consume"))
			return err
		})
		require.Equal(t, 1, winners(t, errs, store.ErrConsumed), "exactly one consume spends the approval")
		decisions++
	})

	owners := map[int64]string{}
	t.Run("Reclaim", func(t *testing.T) {
		for round := range 5 {
			cur, err := reps[0].Get(ctx, a.ID)
			require.NoError(t, err)
			owners[cur.Fence] = cur.Owner
			time.Sleep(5 * time.Millisecond) // the lease lapses
			errs := race(reps, racers, func(s *postgres.Store, r, i int) error {
				fence := cur.Fence
				if i%2 == 1 && fence > 1 {
					fence -= int64(1 + i%int(fence)) // a racer that read the ticket rounds ago
					fence = max(fence, 1)
				}
				at := clockOf(s)
				_, err := s.Reclaim(ctx, a.ID, fence, store.Claim{Owner: fmt.Sprintf("gate-%d-%d-%d", round, r, i),
					At: at, LeaseUntil: at.Add(time.Millisecond)}, note("reclaim"))
				return err
			})
			require.Equal(t, 1, winners(t, errs, store.ErrFenced), "round %d: exactly one reclaim takes the lapsed lease", round)
			decisions++
			next, err := reps[0].Get(ctx, a.ID)
			require.NoError(t, err)
			assert.Equal(t, cur.Fence+1, next.Fence, "each reclaim fences the previous owner off")
			assert.Equal(t, "key-"+a.ID, next.IdempotencyKey, "the key never changes")
		}
	})

	t.Run("Finish", func(t *testing.T) {
		cur, err := reps[0].Get(ctx, a.ID)
		require.NoError(t, err)
		owners[cur.Fence] = cur.Owner
		// Every owner the ticket ever had finishes at once, each with its
		// own fence; only the current one may write the outcome.
		errs := race(reps, racers, func(s *postgres.Store, r, i int) error {
			fence := int64(1 + (r*racers+i)%int(cur.Fence))
			if r == 0 && i == 0 {
				fence = cur.Fence
			}
			_, err := s.Finish(ctx, a.ID, fence, store.Outcome{State: store.Done,
				Result: []byte(fmt.Sprintf(`{"fence":%d}`, fence)), At: clockOf(s)}, note("finish"))
			if err == nil && fence != cur.Fence {
				return fmt.Errorf("a stale owner (fence %d of %d) finished", fence, cur.Fence)
			}
			return err
		})
		require.Equal(t, 1, winners(t, errs, store.ErrFenced), "exactly one finish writes the outcome")
		decisions++
		got, err := reps[1].Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Done, got.State)
		assert.JSONEq(t, fmt.Sprintf(`{"fence":%d}`, cur.Fence), string(got.Result), "the current owner's outcome")
		for fence, owner := range owners {
			assert.ErrorIs(t, reps[2].Renew(ctx, a.ID, owner, fence, dbNow(t, reps[2]).Add(time.Minute)), store.ErrFenced,
				"no owner renews a finished ticket")
		}
	})

	all, err := reps[3].AuditSeq(ctx, 1, 1<<40)
	require.NoError(t, err)
	assert.Len(t, all, decisions, "one row per winning call, none for the refused ones")
	require.NoError(t, audit.VerifyChain(all, canon.Digest{}), "concurrent appends from four pools never fork the chain")
	for i := 1; i < len(all); i++ {
		assert.GreaterOrEqual(t, all[i].Time, all[i-1].Time, "times never decrease along the chain")
	}
}

// TestStaleOwnerFenced replays the interleaving fencing exists for: owner
// A's lease lapses (a pause, a partition), B reclaims the ticket and runs
// it, and A wakes up and writes its outcome first. Without the fence (the
// naive statement matches on the state alone) A overwrites B's run; the
// store refuses A and keeps B's.
func TestStaleOwnerFenced(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	reps := replicas(t, schema, 2)
	gateA, gateB := reps[0], reps[1]

	lapse := func(n int) store.Approval {
		a := approved(t, gateA, n)
		at := dbNow(t, gateA)
		a, err := gateA.Consume(ctx, a.ID, store.Claim{Key: "k", Owner: "gate-a", At: at, LeaseUntil: at.Add(time.Millisecond)},
			note("consume"))
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond)
		at = dbNow(t, gateB)
		b, err := gateB.Reclaim(ctx, a.ID, a.Fence, store.Claim{Owner: "gate-b", At: at, LeaseUntil: at.Add(time.Minute)},
			note("reclaim"))
		require.NoError(t, err)
		require.Equal(t, a.Fence+1, b.Fence)
		return a
	}

	t.Run("Naive", func(t *testing.T) {
		a := lapse(1)
		c := conn(t, schema)
		tag, err := c.Exec(ctx, `UPDATE tickets SET state = 'failed', result = '"a timed out"', finished_at = now()
			WHERE id = $1 AND state = 'executing'`, a.ID)
		require.NoError(t, err)
		assert.EqualValues(t, 1, tag.RowsAffected(), "without a fence the stale owner overwrites the new owner's run")
	})
	t.Run("Store", func(t *testing.T) {
		a := lapse(2)
		at := dbNow(t, gateA)
		_, err := gateA.Finish(ctx, a.ID, a.Fence, store.Outcome{State: store.Failed, Result: []byte(`"a timed out"`), At: at},
			note("finish"))
		require.ErrorIs(t, err, store.ErrFenced)
		assert.ErrorIs(t, gateA.Renew(ctx, a.ID, "gate-a", a.Fence, at.Add(time.Minute)), store.ErrFenced)
		assert.ErrorIs(t, gateA.Renew(ctx, a.ID, "gate-a", a.Fence+1, at.Add(time.Minute)), store.ErrFenced,
			"the new fence with the old owner is not the new owner")
		require.NoError(t, gateB.Renew(ctx, a.ID, "gate-b", a.Fence+1, at.Add(time.Minute)))
		got, err := gateB.Finish(ctx, a.ID, a.Fence+1, store.Outcome{State: store.Done, Result: []byte(`"b ran"`), At: at},
			note("finish"))
		require.NoError(t, err)
		assert.Equal(t, store.Done, got.State)
		assert.Equal(t, `"b ran"`, string(got.Result))
	})
}

// TestLiveLeaseNotReclaimed: a ticket whose owner keeps renewing its lease
// is never reclaimed by another replica, however often it tries; the
// failure issue 11 describes (a restarting replica re-running a live
// execution) cannot happen.
func TestLiveLeaseNotReclaimed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	reps := replicas(t, newSchema(t), 2)
	owner, other := reps[0], reps[1]
	a := approved(t, owner, 1)
	at := dbNow(t, owner)
	a, err := owner.Consume(ctx, a.ID, store.Claim{Key: "k", Owner: "gate-a", At: at, LeaseUntil: at.Add(time.Second)},
		note("consume"))
	require.NoError(t, err)
	// Three seconds of tries against a one-second lease: only the
	// renewals keep it live.
	for range 30 {
		now := dbNow(t, other)
		lapsed, err := other.Expired(ctx, now, 0)
		require.NoError(t, err)
		assert.Empty(t, lapsed, "a live lease is not listed")
		_, err = other.Reclaim(ctx, a.ID, a.Fence, store.Claim{Owner: "gate-b", At: now, LeaseUntil: now.Add(time.Minute)},
			note("reclaim"))
		require.ErrorIs(t, err, store.ErrLeaseLive)
		require.NoError(t, owner.Renew(ctx, a.ID, "gate-a", a.Fence, dbNow(t, owner).Add(time.Second)))
		time.Sleep(100 * time.Millisecond)
	}
	got, err := other.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, "gate-a", got.Owner)
	assert.Equal(t, a.Fence, got.Fence)
}
