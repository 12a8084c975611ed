package votes

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

// testReopen checks [store.Votes.Reopen]: an approval by votes goes back
// to pending with only the kept votes and the reason, with its audit row,
// once; it is refused from every other state, for another approval than
// the one read, after expiry, off the store's clock and after Consume, and
// every refusal changes nothing. Of a Reopen and a Consume racing, exactly
// one wins.
func testReopen(t *testing.T, newStore func(*testing.T) store.Store, n int) {
	// approvedByVotes parks ticket number k, created at created, and
	// approves it at at by alice, bob and carol, a quorum of three.
	approvedByVotes := func(t *testing.T, s store.Store, k int, created, at time.Time) store.Approval {
		t.Helper()
		p, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", k, created), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		for _, who := range []string{"alice", "bob", "carol"} {
			p, err = s.Vote(t.Context(), p.ID, fixture.Vote(who, at), 3, "three of finance", fixture.Note("vote"))
			require.NoError(t, err)
		}
		require.Equal(t, store.Approved, p.State)
		return p
	}
	lapse := func(a store.Approval, at time.Time, keep ...string) store.Lapse {
		return store.Lapse{At: at, ApprovedAt: a.ResolvedAt, Keep: keep, Reason: "bob left finance"}
	}
	t.Run("BackToPending", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		at := fixture.Now(t, s)
		a := approvedByVotes(t, s, 1, at, at)
		rows := len(fixture.Chain(t, s))
		got, err := s.Reopen(ctx, a.ID, lapse(a, at, "carol", "alice"), fixture.Note("reopen"))
		require.NoError(t, err)
		want := a
		want.State, want.Approver, want.Reason, want.ResolvedAt, want.ShownAt = store.Pending, "", "bob left finance", time.Time{}, time.Time{}
		want.Votes = []store.Vote{a.Votes[0], a.Votes[2]} // the kept votes, in their order
		assert.Equal(t, fixture.Normalize(want), fixture.Normalize(got))
		read, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(got), fixture.Normalize(read), "returned as stored")
		fixture.AssertNoted(t, s, a.ID, "reopen", store.Pending)
		assert.Len(t, fixture.Chain(t, s), rows+1, "one row")

		// Once: the same lapse again is refused and writes nothing.
		_, err = s.Reopen(ctx, a.ID, lapse(a, at, "carol", "alice"), fixture.Note("reopen"))
		assert.ErrorIs(t, err, store.ErrNotApproved)
		assert.Len(t, fixture.Chain(t, s), rows+1)

		// Pending again: it is in the queue, a dropped voter may vote
		// again, and a kept one still may not.
		page, _, err := s.Queue(ctx, store.QueueFilter{User: "u1", Now: at})
		require.NoError(t, err)
		assert.Len(t, page, 1, "a reopened ticket is back in its approver's queue")
		_, err = s.Vote(ctx, a.ID, fixture.Vote("alice", at), 3, "three", fixture.Note("vote"))
		assert.ErrorIs(t, err, store.ErrDuplicate, "a kept vote still counts once")
		again, err := s.Vote(ctx, a.ID, fixture.Vote("dave", at.Add(time.Millisecond)), 3, "three", fixture.Note("vote"))
		require.NoError(t, err)
		assert.Equal(t, store.Approved, again.State, "the kept votes and a new one make the quorum")
		_, err = s.Reopen(ctx, a.ID, lapse(a, at, "alice"), fixture.Note("reopen"))
		assert.ErrorIs(t, err, store.ErrNotApproved, "a lapse read from an older approval never undoes a newer one")
		_, err = s.Reopen(ctx, a.ID, lapse(again, at), fixture.Note("reopen"))
		require.NoError(t, err, "keeping no vote at all")
		read, err = s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Empty(t, read.Votes)
	})
	t.Run("Refusals", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		at := fixture.Now(t, s)
		a := approvedByVotes(t, s, 1, at, at)
		alone := fixture.ParkApproved(t, s, 2)
		pending, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 3, at), store.Caps{}, nil)
		require.NoError(t, err)
		consumed := approvedByVotes(t, s, 4, at, at)
		_, err = s.Consume(ctx, consumed.ID, fixture.Claim("k4", "o", at), fixture.Note("consume"))
		require.NoError(t, err)
		revoked := approvedByVotes(t, s, 5, at, at)
		_, err = s.Resolve(ctx, revoked.ID, store.Resolution{To: store.Revoked, Reason: "no", At: at}, nil)
		require.NoError(t, err)
		expiring := approvedByVotes(t, s, 6, at.Add(-fixture.TTL+time.Second), at)
		before, _, err := s.List(ctx, store.Filter{})
		require.NoError(t, err)
		rows := len(fixture.Chain(t, s))
		for _, c := range []struct {
			name string
			id   string
			l    store.Lapse
			want error
		}{
			{"unknown", "no-such-ticket", lapse(a, at), store.ErrNotFound},
			{"approved alone", alone.ID, lapse(alone, at), store.ErrNotApproved},
			{"pending", pending.ID, store.Lapse{At: at, ApprovedAt: at, Reason: "x"}, store.ErrNotApproved},
			{"consumed", consumed.ID, lapse(consumed, at), store.ErrConsumed},
			{"revoked", revoked.ID, lapse(revoked, at), store.ErrRevoked},
			{"another approval", a.ID, store.Lapse{At: at, ApprovedAt: at.Add(time.Millisecond), Reason: "x"}, store.ErrNotApproved},
			{"expired", expiring.ID, lapse(expiring, at.Add(time.Second)), store.ErrExpired},
			{"clock skew", a.ID, lapse(a, at.Add(time.Hour)), store.ErrClockSkew},
			{"no time", a.ID, store.Lapse{ApprovedAt: a.ResolvedAt, Reason: "x"}, store.ErrInvalid},
			{"no reason", a.ID, store.Lapse{At: at, ApprovedAt: a.ResolvedAt}, store.ErrInvalid},
			{"bad text", a.ID, store.Lapse{At: at, ApprovedAt: a.ResolvedAt, Reason: "\xff"}, store.ErrInvalid},
			{"too many kept", a.ID, store.Lapse{At: at, ApprovedAt: a.ResolvedAt, Reason: "x", Keep: make([]string, store.MaxQuorum+1)}, store.ErrTooLarge},
		} {
			_, err := s.Reopen(ctx, c.id, c.l, fixture.Note("reopen"))
			assert.ErrorIs(t, err, c.want, c.name)
		}
		_, err = s.Reopen(ctx, a.ID, lapse(a, at), fixture.BadNote)
		assert.ErrorIs(t, err, store.ErrInvalid, "a record the chain refuses fails the reopen")
		after, _, err := s.List(ctx, store.Filter{})
		require.NoError(t, err)
		require.Len(t, after, len(before))
		for i := range before {
			assert.Equal(t, fixture.Normalize(before[i]), fixture.Normalize(after[i]), "a refused reopen changes nothing")
		}
		assert.Len(t, fixture.Chain(t, s), rows, "and writes no row")
	})
	t.Run("RaceConsume", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		at := fixture.Now(t, s)
		for k := range 8 {
			a := approvedByVotes(t, s, 10+k, at, at)
			errs := fixture.Race(max(n, 2), func(i int) error {
				if i%2 == 0 {
					_, err := s.Reopen(ctx, a.ID, lapse(a, at, "alice"), fixture.Note("reopen"))
					return err
				}
				_, err := s.Consume(ctx, a.ID, fixture.Claim(fmt.Sprint("k", k), fmt.Sprint("o", i), at), fixture.Note("consume"))
				return err
			})
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, store.ErrNotApproved), errors.Is(err, store.ErrConsumed):
				default:
					t.Fatalf("unexpected refusal: %v", err)
				}
			}
			assert.Equal(t, 1, ok, "exactly one of the reopens and consumes wins")
			read, err := s.Get(ctx, a.ID)
			require.NoError(t, err)
			assert.Contains(t, []store.State{store.Pending, store.Executing}, read.State)
		}
	})
}
