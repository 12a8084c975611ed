// Package execution checks [store.Execution] for the conformance suite:
// an approved ticket is consumed once; a lease is renewed only by its
// owner under the current fence; an execution finishes once, under the
// current fence; expired leases are listed and reclaimed, never live ones.
package execution

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Consume checks [store.Execution.Consume]: an approved ticket is consumed
// once, with its key, owner and lease; a ticket that ran, was never
// approved or expired is refused.
func Consume(t *testing.T, newStore func(*testing.T) store.Store) {
	t.Run("ApprovedOnce", func(t *testing.T) {
		s := newStore(t)
		a := fixture.ParkApproved(t, s, 1)
		at := fixture.Now(t, s)
		c := fixture.Claim("key-1", "gate-1", at)
		got, err := s.Consume(t.Context(), a.ID, c, fixture.Note("consume"))
		require.NoError(t, err)
		assert.Equal(t, store.Executing, got.State)
		assert.Equal(t, "key-1", got.IdempotencyKey)
		assert.Equal(t, "gate-1", got.Owner)
		assert.Equal(t, int64(1), got.Fence, "the first fence is 1")
		assert.True(t, c.LeaseUntil.Equal(got.LeaseUntil))
		assert.True(t, at.Equal(got.ConsumedAt))
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(got), fixture.Normalize(read), "the intent is recorded with the consume")
		fixture.AssertNoted(t, s, a.ID, "consume", store.Executing)
		assert.Equal(t, "key-1", fixture.Last(t, s).IdempotencyKey)

		_, err = s.Consume(t.Context(), a.ID, fixture.Claim("key-2", "gate-2", at), nil)
		assert.ErrorIs(t, err, store.ErrConsumed)
		read, err = s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, "key-1", read.IdempotencyKey, "refused consumes leave the first key")
		assert.Equal(t, "gate-1", read.Owner)
	})
	t.Run("Ran", func(t *testing.T) {
		for _, end := range []store.State{store.Done, store.Failed, store.Abandoned} {
			s := newStore(t)
			at := fixture.Now(t, s)
			a := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(fixture.Lease))
			_, err := s.Finish(t.Context(), a.ID, 1, store.Outcome{State: end, At: at}, nil)
			require.NoError(t, err)
			_, err = s.Consume(t.Context(), a.ID, fixture.Claim("key-3", "gate-2", at), nil)
			assert.ErrorIs(t, err, store.ErrConsumed, "a %s ticket is still consumed", end)
		}
	})
	t.Run("NotApproved", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		for n, to := range []store.State{store.Pending, store.Denied, store.Expired, store.Cancelled} {
			a, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", n, at), store.Caps{}, nil)
			require.NoError(t, err)
			if to != store.Pending {
				_, err = s.Resolve(t.Context(), a.ID, store.Resolution{To: to, At: at}, nil)
				require.NoError(t, err)
			}
			_, err = s.Consume(t.Context(), a.ID, fixture.Claim("key", "gate-1", at), nil)
			assert.ErrorIs(t, err, store.ErrNotApproved, "state %s", to)
			read, err := s.Get(t.Context(), a.ID)
			require.NoError(t, err)
			assert.Equal(t, to, read.State)
			assert.Empty(t, read.IdempotencyKey)
		}
	})
	t.Run("AtOrAfterExpiry", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		in := fixture.TicketAt("s1", "u1", 1, at.Add(-time.Minute))
		in.ExpiresAt = at
		a, _, err := s.Park(t.Context(), in, store.Caps{}, nil)
		require.NoError(t, err)
		_, err = s.Resolve(t.Context(), a.ID, fixture.Approve(at.Add(-time.Second)), nil)
		require.NoError(t, err)
		for _, when := range []time.Time{a.ExpiresAt, a.ExpiresAt.Add(time.Second)} {
			_, err := s.Consume(t.Context(), a.ID, fixture.Claim("key", "gate-1", when), nil)
			assert.ErrorIs(t, err, store.ErrExpired)
		}
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Approved, read.State)
		assert.Empty(t, read.IdempotencyKey)
	})
	t.Run("Refusals", func(t *testing.T) {
		s := newStore(t)
		a := fixture.ParkApproved(t, s, 1)
		at := fixture.Now(t, s)
		cases := []struct {
			name string
			id   string
			c    store.Claim
			want error
		}{
			{"unknown id", "no-such-ticket", fixture.Claim("key", "gate-1", at), store.ErrNotFound},
			{"empty key", a.ID, fixture.Claim("", "gate-1", at), store.ErrInvalid},
			{"empty owner", a.ID, fixture.Claim("key", "", at), store.ErrInvalid},
			{"oversized key", a.ID, fixture.Claim(strings.Repeat("k", store.MaxKeySize+1), "gate-1", at), store.ErrTooLarge},
			{"oversized owner", a.ID, fixture.Claim("key", strings.Repeat("o", store.MaxKeySize+1), at), store.ErrTooLarge},
			{"owner not UTF-8", a.ID, fixture.Claim("key", "gate-\xff", at), store.ErrInvalid},
			{"no time", a.ID, store.Claim{Key: "key", Owner: "gate-1", LeaseUntil: at}, store.ErrInvalid},
			{"no lease", a.ID, store.Claim{Key: "key", Owner: "gate-1", At: at}, store.ErrInvalid},
			{"lease ends at the claim", a.ID, store.Claim{Key: "key", Owner: "gate-1", At: at, LeaseUntil: at}, store.ErrInvalid},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.Consume(t.Context(), c.id, c.c, fixture.Note("consume"))
				assert.ErrorIs(t, err, c.want)
			})
		}
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Approved, read.State)
		assert.Equal(t, "approve", fixture.Last(t, s).Decision, "refused consumes write no row")
	})
}

// Renew checks [store.Execution.Renew]: only the owner holding the
// current fence extends the lease, and renewing writes no row.
func Renew(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	at := fixture.Now(t, s)
	a := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(fixture.Lease))
	head := fixture.Last(t, s)
	until := at.Add(2 * fixture.Lease)
	require.NoError(t, s.Renew(t.Context(), a.ID, "gate-1", 1, until))
	read, err := s.Get(t.Context(), a.ID)
	require.NoError(t, err)
	assert.True(t, until.Equal(read.LeaseUntil))
	assert.Equal(t, head, fixture.Last(t, s), "a renewal writes no row")

	for _, c := range []struct {
		name  string
		owner string
		fence int64
	}{
		{"another owner", "gate-2", 1},
		{"a stale fence", "gate-1", 2},
		{"an owner with a different case", "Gate-1", 1},
	} {
		err := s.Renew(t.Context(), a.ID, c.owner, c.fence, at.Add(time.Hour))
		assert.ErrorIs(t, err, store.ErrFenced, c.name)
	}
	assert.ErrorIs(t, s.Renew(t.Context(), "no-such-ticket", "gate-1", 1, until), store.ErrNotFound)
	assert.ErrorIs(t, s.Renew(t.Context(), a.ID, "", 1, until), store.ErrInvalid)
	assert.ErrorIs(t, s.Renew(t.Context(), a.ID, "gate-1", 0, until), store.ErrInvalid)
	assert.ErrorIs(t, s.Renew(t.Context(), a.ID, "gate-1", 1, time.Time{}), store.ErrInvalid)
	read, err = s.Get(t.Context(), a.ID)
	require.NoError(t, err)
	assert.True(t, until.Equal(read.LeaseUntil), "refused renewals change nothing")

	_, err = s.Finish(t.Context(), a.ID, 1, fixture.Done(at), nil)
	require.NoError(t, err)
	assert.ErrorIs(t, s.Renew(t.Context(), a.ID, "gate-1", 1, until), store.ErrFenced, "a finished ticket has no lease")
	approved := fixture.ParkApproved(t, s, 2)
	assert.ErrorIs(t, s.Renew(t.Context(), approved.ID, "gate-1", 1, until), store.ErrFenced, "an approved ticket has no lease")
}

// Finish checks [store.Execution.Finish]: an executing ticket ends done,
// failed or abandoned once, and only under its current fence.
func Finish(t *testing.T, newStore func(*testing.T) store.Store) {
	for _, end := range []store.State{store.Done, store.Failed, store.Abandoned} {
		t.Run(string(end), func(t *testing.T) {
			s := newStore(t)
			at := fixture.Now(t, s)
			a := fixture.ParkApproved(t, s, 1)
			_, err := s.Finish(t.Context(), a.ID, 1, fixture.Done(at), nil)
			assert.ErrorIs(t, err, store.ErrFenced, "an approved ticket is not executing")
			a, err = s.Consume(t.Context(), a.ID, fixture.Claim("key", "gate-1", at), nil)
			require.NoError(t, err)
			_, err = s.Finish(t.Context(), a.ID, 1, store.Outcome{State: end, Result: make([]byte, store.MaxFieldSize+1), At: at}, nil)
			assert.ErrorIs(t, err, store.ErrTooLarge)
			for _, bad := range []store.State{store.Executing, store.Approved, store.Revoked, ""} {
				_, err = s.Finish(t.Context(), a.ID, 1, store.Outcome{State: bad, At: at}, nil)
				assert.ErrorIs(t, err, store.ErrInvalid, "outcome %q", bad)
			}
			_, err = s.Finish(t.Context(), a.ID, 1, store.Outcome{State: end}, nil)
			assert.ErrorIs(t, err, store.ErrInvalid, "no time")
			_, err = s.Finish(t.Context(), a.ID, 2, store.Outcome{State: end, At: at}, nil)
			assert.ErrorIs(t, err, store.ErrFenced, "a fence from the future")
			read, err := s.Get(t.Context(), a.ID)
			require.NoError(t, err)
			assert.Equal(t, store.Executing, read.State, "refused finishes change nothing")

			result := []byte(fmt.Sprintf(`{"outcome":%q}`, end))
			got, err := s.Finish(t.Context(), a.ID, 1, store.Outcome{State: end, Result: result, At: at}, fixture.Note("finish"))
			require.NoError(t, err)
			assert.Equal(t, end, got.State)
			assert.Equal(t, result, got.Result)
			assert.True(t, at.Equal(got.FinishedAt))
			assert.Equal(t, "key", got.IdempotencyKey)
			read, err = s.Get(t.Context(), a.ID)
			require.NoError(t, err)
			assert.Equal(t, fixture.Normalize(got), fixture.Normalize(read))
			fixture.AssertNoted(t, s, a.ID, "finish", end)

			_, err = s.Finish(t.Context(), a.ID, 1, store.Outcome{State: store.Done, Result: []byte(`"again"`), At: at}, nil)
			assert.ErrorIs(t, err, store.ErrFenced, "an outcome is written once")
			_, err = s.Finish(t.Context(), "no-such-ticket", 1, fixture.Done(at), nil)
			assert.ErrorIs(t, err, store.ErrNotFound)
			read, err = s.Get(t.Context(), a.ID)
			require.NoError(t, err)
			assert.Equal(t, result, read.Result, "a second finish changes nothing")
		})
	}
}

// Expired checks [store.Execution.Expired]: exactly the executions whose
// lease ended are listed, by lease end, within the limit.
func Expired(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	at := fixture.Now(t, s)
	empty, err := s.Expired(t.Context(), at, 0)
	require.NoError(t, err)
	assert.Empty(t, empty)

	// Leases ending at at-1s, at-1.5s, at+1m and at-1.2s, and one finished.
	ends := []time.Duration{-time.Second, -1500 * time.Millisecond, time.Minute, -1200 * time.Millisecond, -time.Second}
	var ids []string
	for n, d := range ends {
		ids = append(ids, fixture.ParkExecuting(t, s, n, "gate-1", at.Add(d)).ID)
	}
	_, err = s.Finish(t.Context(), ids[4], 1, fixture.Done(at), nil)
	require.NoError(t, err)
	fixture.ParkApproved(t, s, 9)

	got, err := s.Expired(t.Context(), at, 0)
	require.NoError(t, err)
	var gotIDs []string
	for _, a := range got {
		assert.Equal(t, store.Executing, a.State)
		gotIDs = append(gotIDs, a.ID)
	}
	assert.Equal(t, []string{ids[1], ids[3], ids[0]}, gotIDs, "expired leases only, oldest lease first")
	one, err := s.Expired(t.Context(), at, 1)
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Equal(t, ids[1], one[0].ID)
	edge, err := s.Expired(t.Context(), at.Add(-time.Second), 0)
	require.NoError(t, err)
	assert.Len(t, edge, 3, "a lease ending exactly at at has expired")
	live, err := s.Expired(t.Context(), at.Add(-2*time.Second), 0)
	require.NoError(t, err)
	assert.Empty(t, live)
	_, err = s.Expired(t.Context(), at, -1)
	assert.ErrorIs(t, err, store.ErrInvalid)
}

// Reclaim checks that only an expired lease is taken over, that the
// new owner gets the next fence and the same key, and that the previous
// owner is fenced off from renewing and finishing.
func Reclaim(t *testing.T, newStore func(*testing.T) store.Store) {
	t.Run("Expired", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		a := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(-time.Second))
		c := fixture.Claim("", "gate-2", at)
		got, err := s.Reclaim(t.Context(), a.ID, 1, c, fixture.Note("reclaim"))
		require.NoError(t, err)
		assert.Equal(t, store.Executing, got.State)
		assert.Equal(t, "gate-2", got.Owner)
		assert.Equal(t, int64(2), got.Fence)
		assert.True(t, c.LeaseUntil.Equal(got.LeaseUntil))
		assert.Equal(t, a.IdempotencyKey, got.IdempotencyKey, "the key never changes")
		assert.True(t, a.ConsumedAt.Equal(got.ConsumedAt), "the consume time is kept")
		fixture.AssertNoted(t, s, a.ID, "reclaim", store.Executing)
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(got), fixture.Normalize(read))

		assert.ErrorIs(t, s.Renew(t.Context(), a.ID, "gate-1", 1, at.Add(time.Hour)), store.ErrFenced,
			"the previous owner cannot renew")
		_, err = s.Finish(t.Context(), a.ID, 1, store.Outcome{State: store.Failed, Result: []byte(`"stale"`), At: at}, nil)
		assert.ErrorIs(t, err, store.ErrFenced, "the previous owner cannot finish")
		_, err = s.Reclaim(t.Context(), a.ID, 1, fixture.Claim("", "gate-3", at), nil)
		assert.ErrorIs(t, err, store.ErrFenced, "a reclaim with the old fence loses")
		_, err = s.Reclaim(t.Context(), a.ID, 2, fixture.Claim("", "gate-3", at), nil)
		assert.ErrorIs(t, err, store.ErrLeaseLive, "the new owner's lease is live")

		require.NoError(t, s.Renew(t.Context(), a.ID, "gate-2", 2, at.Add(time.Minute)))
		fin, err := s.Finish(t.Context(), a.ID, 2, fixture.Done(at), nil)
		require.NoError(t, err, "the new owner finishes")
		assert.Equal(t, store.Done, fin.State)
		assert.Equal(t, []byte(`"ok"`), fin.Result, "the new owner's outcome stands")
	})
	t.Run("Live", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		a := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(time.Second))
		_, err := s.Reclaim(t.Context(), a.ID, 1, fixture.Claim("", "gate-2", at), fixture.Note("reclaim"))
		assert.ErrorIs(t, err, store.ErrLeaseLive, "a live owner's ticket is not recovered")
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, "gate-1", read.Owner)
		assert.Equal(t, int64(1), read.Fence)
		assert.Equal(t, "consume", fixture.Last(t, s).Decision, "a refused reclaim writes no row")

		require.NoError(t, s.Renew(t.Context(), a.ID, "gate-1", 1, at.Add(time.Minute)))
		_, err = s.Reclaim(t.Context(), a.ID, 1, fixture.Claim("", "gate-2", at.Add(time.Second)), nil)
		assert.ErrorIs(t, err, store.ErrLeaseLive, "a renewed lease is live again")
	})
	t.Run("Refusals", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		a := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(-time.Second))
		approved := fixture.ParkApproved(t, s, 2)
		cases := []struct {
			name  string
			id    string
			fence int64
			c     store.Claim
			want  error
		}{
			{"unknown id", "no-such-ticket", 1, fixture.Claim("", "gate-2", at), store.ErrNotFound},
			{"not executing", approved.ID, 1, fixture.Claim("", "gate-2", at), store.ErrFenced},
			{"stale fence", a.ID, 0, fixture.Claim("", "gate-2", at), store.ErrFenced},
			{"future fence", a.ID, 2, fixture.Claim("", "gate-2", at), store.ErrFenced},
			{"another key", a.ID, 1, fixture.Claim("other-key", "gate-2", at), store.ErrInvalid},
			{"no owner", a.ID, 1, fixture.Claim("", "", at), store.ErrInvalid},
			{"no lease", a.ID, 1, store.Claim{Owner: "gate-2", At: at}, store.ErrInvalid},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.Reclaim(t.Context(), c.id, c.fence, c.c, nil)
				assert.ErrorIs(t, err, c.want)
			})
		}
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(a), fixture.Normalize(read), "refused reclaims change nothing")
		got, err := s.Reclaim(t.Context(), a.ID, 1, fixture.Claim(a.IdempotencyKey, "gate-2", at), nil)
		require.NoError(t, err, "the stored key may be repeated")
		assert.Equal(t, int64(2), got.Fence)
	})
}
