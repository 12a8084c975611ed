package storetest

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

func testPark(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		in := Ticket("s1", "u1", 1)
		got, merged, err := s.Park(ctx, in, store.Caps{})
		require.NoError(t, err)
		assert.False(t, merged)
		raw, err := hex.DecodeString(got.ID)
		require.NoError(t, err, "generated id must be hex")
		assert.Len(t, raw, 16, "generated id must be 128 bits")
		want := in
		want.ID, want.State = got.ID, store.Pending
		assert.Equal(t, normalize(want), normalize(got))
		read, err := s.Get(ctx, got.ID)
		require.NoError(t, err)
		assert.Equal(t, normalize(want), normalize(read))
	})
	t.Run("CallerID", func(t *testing.T) {
		s := newStore(t)
		in := Ticket("s1", "u1", 1)
		in.ID = "caller-chosen"
		got, _, err := s.Park(ctx, in, store.Caps{})
		require.NoError(t, err)
		assert.Equal(t, "caller-chosen", got.ID)
		dup := Ticket("s2", "u2", 2)
		dup.ID = "caller-chosen"
		_, _, err = s.Park(ctx, dup, store.Caps{})
		assert.ErrorIs(t, err, store.ErrDuplicate)
		read, err := s.Get(ctx, "caller-chosen")
		require.NoError(t, err)
		assert.Equal(t, "s1", read.Session, "a refused duplicate must not overwrite")
	})
	t.Run("GeneratedIDsDiffer", func(t *testing.T) {
		s := newStore(t)
		a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
		require.NoError(t, err)
		b, _, err := s.Park(ctx, Ticket("s1", "u1", 2), store.Caps{})
		require.NoError(t, err)
		assert.NotEqual(t, a.ID, b.ID)
	})
	t.Run("Refusals", func(t *testing.T) {
		big := strings.Repeat("x", store.MaxFieldSize+1)
		cases := []struct {
			name   string
			mutate func(*store.Approval)
			want   error
		}{
			{"not pending", func(a *store.Approval) { a.State = store.Approved }, store.ErrInvalid},
			{"unknown state", func(a *store.Approval) { a.State = "weird" }, store.ErrInvalid},
			{"empty effect", func(a *store.Approval) { a.Effect = nil }, store.ErrInvalid},
			{"digest mismatch", func(a *store.Approval) { a.Digest = canon.Sum([]byte("{}")) }, store.ErrInvalid},
			{"no creation time", func(a *store.Approval) { a.CreatedAt = time.Time{} }, store.ErrInvalid},
			{"expiry before creation", func(a *store.Approval) { a.ExpiresAt = a.CreatedAt.Add(-time.Second) }, store.ErrInvalid},
			{"expiry at creation", func(a *store.Approval) { a.ExpiresAt = a.CreatedAt }, store.ErrInvalid},
			{"no session", func(a *store.Approval) { a.Session = "" }, store.ErrInvalid},
			{"no user", func(a *store.Approval) { a.User = "" }, store.ErrInvalid},
			{"already consumed", func(a *store.Approval) { a.IdempotencyKey = "k" }, store.ErrInvalid},
			{"already approved", func(a *store.Approval) { a.Approver = "mallory" }, store.ErrInvalid},
			{"merged preset", func(a *store.Approval) { a.Merged = 3 }, store.ErrInvalid},
			{"oversized effect", func(a *store.Approval) { a.Effect = []byte(big); a.Digest = canon.Sum(a.Effect) }, store.ErrTooLarge},
			{"oversized card", func(a *store.Approval) { a.Card = []byte(big) }, store.ErrTooLarge},
			{"oversized rationale", func(a *store.Approval) { a.Rationale = big }, store.ErrTooLarge},
			{"oversized session", func(a *store.Approval) { a.Session = big[:store.MaxKeySize+1] }, store.ErrTooLarge},
			{"too many taints", func(a *store.Approval) { a.Taint = make([]string, store.MaxTaint+1) }, store.ErrTooLarge},
		}
		s := newStore(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := Ticket("s1", "u1", 1)
				a.ID = "refused"
				c.mutate(&a)
				_, _, err := s.Park(ctx, a, store.Caps{})
				assert.ErrorIs(t, err, c.want)
				_, err = s.Get(ctx, "refused")
				assert.ErrorIs(t, err, store.ErrNotFound, "a refused ticket must not be stored")
			})
		}
		p, err := s.Pending(ctx, store.Filter{})
		require.NoError(t, err)
		assert.Empty(t, p)
	})
	t.Run("GetUnknown", func(t *testing.T) {
		s := newStore(t)
		_, err := s.Get(ctx, "no-such-ticket")
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
}

func testMerge(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	first, merged, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
	require.NoError(t, err)
	require.False(t, merged)

	for i := 1; i <= 2; i++ {
		dup, merged, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{PerSession: 1, PerUser: 1})
		require.NoError(t, err, "a duplicate merges even at the cap")
		assert.True(t, merged)
		assert.Equal(t, first.ID, dup.ID)
		assert.Equal(t, i, dup.Merged)
	}
	read, err := s.Get(ctx, first.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, read.Merged, "the merge count is stored")

	other, merged, err := s.Park(ctx, Ticket("s2", "u1", 1), store.Caps{})
	require.NoError(t, err)
	assert.False(t, merged, "the same effect in another session is a new ticket")
	assert.NotEqual(t, first.ID, other.ID)

	late := Ticket("s1", "u1", 1)
	late.CreatedAt = first.ExpiresAt
	late.ExpiresAt = late.CreatedAt.Add(ttl)
	fresh, merged, err := s.Park(ctx, late, store.Caps{})
	require.NoError(t, err)
	assert.False(t, merged, "a ticket past its expiry takes no merges")
	assert.NotEqual(t, first.ID, fresh.ID)

	_, err = s.Resolve(ctx, fresh.ID, store.Resolution{To: store.Denied, Approver: "alice", At: late.CreatedAt})
	require.NoError(t, err)
	again, merged, err := s.Park(ctx, late, store.Caps{})
	require.NoError(t, err)
	assert.False(t, merged, "a resolved ticket takes no merges")
	assert.NotEqual(t, fresh.ID, again.ID)
}

func testCaps(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	t.Run("PerSession", func(t *testing.T) {
		s := newStore(t)
		caps := store.Caps{PerSession: 2}
		for n := 1; n <= 2; n++ {
			_, _, err := s.Park(ctx, Ticket("s1", "u1", n), caps)
			require.NoError(t, err)
		}
		_, _, err := s.Park(ctx, Ticket("s1", "u1", 3), caps)
		assert.ErrorIs(t, err, store.ErrPendingCap)
		_, _, err = s.Park(ctx, Ticket("s2", "u1", 3), caps)
		assert.NoError(t, err, "another session has its own cap")
		p, err := s.Pending(ctx, store.Filter{Session: "s1"})
		require.NoError(t, err)
		assert.Len(t, p, 2)
	})
	t.Run("PerUser", func(t *testing.T) {
		s := newStore(t)
		caps := store.Caps{PerUser: 2}
		_, _, err := s.Park(ctx, Ticket("s1", "u1", 1), caps)
		require.NoError(t, err)
		_, _, err = s.Park(ctx, Ticket("s2", "u1", 2), caps)
		require.NoError(t, err)
		_, _, err = s.Park(ctx, Ticket("s3", "u1", 3), caps)
		assert.ErrorIs(t, err, store.ErrPendingCap, "the user cap spans sessions")
		_, _, err = s.Park(ctx, Ticket("s3", "u2", 3), caps)
		assert.NoError(t, err, "another user has their own cap")
	})
	t.Run("ZeroIsNoCap", func(t *testing.T) {
		s := newStore(t)
		for n := 1; n <= 20; n++ {
			_, _, err := s.Park(ctx, Ticket("s1", "u1", n), store.Caps{})
			require.NoError(t, err)
		}
	})
	t.Run("OnlyLivePendingCount", func(t *testing.T) {
		s := newStore(t)
		caps := store.Caps{PerSession: 1, PerUser: 1}
		a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), caps)
		require.NoError(t, err)
		_, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Denied, Approver: "alice", At: t0})
		require.NoError(t, err)
		b, _, err := s.Park(ctx, Ticket("s1", "u1", 2), caps)
		require.NoError(t, err, "a resolved ticket no longer counts")

		later := Ticket("s1", "u1", 3)
		later.CreatedAt = b.ExpiresAt
		later.ExpiresAt = later.CreatedAt.Add(ttl)
		_, _, err = s.Park(ctx, later, caps)
		assert.NoError(t, err, "a ticket past its expiry no longer counts, swept or not")
	})
}

func testResolve(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	at := t0.Add(time.Minute)
	for _, to := range []store.State{store.Approved, store.Denied, store.Expired, store.Cancelled} {
		t.Run(string(to), func(t *testing.T) {
			s := newStore(t)
			a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
			require.NoError(t, err)
			r := store.Resolution{To: to, Approver: "alice", Reason: "because", Evidence: []byte(`{"a":1}`), At: at}
			got, err := s.Resolve(ctx, a.ID, r)
			require.NoError(t, err)
			assert.Equal(t, to, got.State)
			assert.Equal(t, "alice", got.Approver)
			assert.Equal(t, "because", got.Reason)
			assert.Equal(t, []byte(`{"a":1}`), got.Evidence)
			assert.True(t, at.Equal(got.ResolvedAt))
			read, err := s.Get(ctx, a.ID)
			require.NoError(t, err)
			assert.Equal(t, normalize(got), normalize(read))

			for _, again := range []store.State{store.Approved, store.Denied, store.Cancelled} {
				_, err = s.Resolve(ctx, a.ID, store.Resolution{To: again, Approver: "mallory", At: at})
				assert.ErrorIs(t, err, store.ErrResolved)
			}
			read, err = s.Get(ctx, a.ID)
			require.NoError(t, err)
			assert.Equal(t, "alice", read.Approver, "a refused second resolve changes nothing")
		})
	}
	t.Run("ApproveAtOrAfterExpiry", func(t *testing.T) {
		s := newStore(t)
		a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
		require.NoError(t, err)
		for _, when := range []time.Time{a.ExpiresAt, a.ExpiresAt.Add(time.Second)} {
			_, err = s.Resolve(ctx, a.ID, approve(when))
			assert.ErrorIs(t, err, store.ErrExpired)
		}
		read, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Pending, read.State)
		got, err := s.Resolve(ctx, a.ID, approve(a.ExpiresAt.Add(-time.Microsecond)))
		require.NoError(t, err, "approving just before expiry works")
		assert.Equal(t, store.Approved, got.State)
	})
	t.Run("DenyAfterExpiry", func(t *testing.T) {
		s := newStore(t)
		a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
		require.NoError(t, err)
		got, err := s.Resolve(ctx, a.ID, store.Resolution{To: store.Denied, At: a.ExpiresAt.Add(time.Hour)})
		require.NoError(t, err)
		assert.Equal(t, store.Denied, got.State)
	})
	t.Run("Refusals", func(t *testing.T) {
		s := newStore(t)
		a, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
		require.NoError(t, err)
		cases := []struct {
			name string
			id   string
			r    store.Resolution
			want error
		}{
			{"unknown id", "no-such-ticket", approve(at), store.ErrNotFound},
			{"to executing", a.ID, store.Resolution{To: store.Executing, At: at}, store.ErrInvalid},
			{"to pending", a.ID, store.Resolution{To: store.Pending, At: at}, store.ErrInvalid},
			{"to done", a.ID, store.Resolution{To: store.Done, At: at}, store.ErrInvalid},
			{"no time", a.ID, store.Resolution{To: store.Approved}, store.ErrInvalid},
			{"oversized evidence", a.ID, store.Resolution{To: store.Approved, At: at,
				Evidence: make([]byte, store.MaxFieldSize+1)}, store.ErrTooLarge},
			{"oversized approver", a.ID, store.Resolution{To: store.Approved, At: at,
				Approver: strings.Repeat("a", store.MaxKeySize+1)}, store.ErrTooLarge},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.Resolve(ctx, c.id, c.r)
				assert.ErrorIs(t, err, c.want)
			})
		}
		read, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Pending, read.State, "refused resolves change nothing")
		assert.Empty(t, read.Evidence)
	})
}

func testExpirePending(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	var ids []string
	for n := 1; n <= 4; n++ {
		a := Ticket("s1", "u1", n)
		a.ExpiresAt = t0.Add(time.Duration(n) * time.Minute)
		p, _, err := s.Park(ctx, a, store.Caps{})
		require.NoError(t, err)
		ids = append(ids, p.ID)
	}
	_, err := s.Resolve(ctx, ids[0], approve(t0))
	require.NoError(t, err)

	now := t0.Add(3 * time.Minute)
	got, err := s.ExpirePending(ctx, now)
	require.NoError(t, err)
	require.Len(t, got, 2, "pending tickets with expiry at or before now: 2 and 3")
	assert.Equal(t, ids[1], got[0].ID)
	assert.Equal(t, ids[2], got[1].ID)
	for _, a := range got {
		assert.Equal(t, store.Expired, a.State)
		assert.True(t, now.Equal(a.ResolvedAt))
	}
	states := map[string]store.State{ids[0]: store.Approved, ids[1]: store.Expired, ids[2]: store.Expired, ids[3]: store.Pending}
	for id, want := range states {
		a, err := s.Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, want, a.State)
	}
	again, err := s.ExpirePending(ctx, now)
	require.NoError(t, err)
	assert.Empty(t, again, "expiry happens once")
	_, err = s.Resolve(ctx, ids[1], approve(t0))
	assert.ErrorIs(t, err, store.ErrResolved, "an expired ticket cannot be approved")
}

func testPending(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	type key struct{ session, user string }
	parked := map[key][]string{}
	n := 0
	for _, k := range []key{{"s1", "u1"}, {"s2", "u1"}, {"s3", "u2"}, {"s1", "u1"}} {
		n++
		a := Ticket(k.session, k.user, n)
		a.CreatedAt = t0.Add(time.Duration(n) * time.Second)
		a.ExpiresAt = a.CreatedAt.Add(ttl)
		p, _, err := s.Park(ctx, a, store.Caps{})
		require.NoError(t, err)
		parked[k] = append(parked[k], p.ID)
	}
	resolved, _, err := s.Park(ctx, Ticket("s1", "u1", 99), store.Caps{})
	require.NoError(t, err)
	_, err = s.Resolve(ctx, resolved.ID, approve(t0))
	require.NoError(t, err)

	ids := func(f store.Filter) []string {
		p, err := s.Pending(ctx, f)
		require.NoError(t, err)
		var out []string
		for _, a := range p {
			assert.Equal(t, store.Pending, a.State)
			out = append(out, a.ID)
		}
		return out
	}
	assert.Equal(t, parked[key{"s1", "u1"}], ids(store.Filter{Session: "s1"}), "oldest first, resolved excluded")
	assert.Equal(t, []string{parked[key{"s1", "u1"}][0], parked[key{"s2", "u1"}][0], parked[key{"s1", "u1"}][1]},
		ids(store.Filter{User: "u1"}))
	assert.Equal(t, parked[key{"s3", "u2"}], ids(store.Filter{Session: "s3", User: "u2"}))
	assert.Empty(t, ids(store.Filter{Session: "s3", User: "u1"}), "both fields must match")
	assert.Len(t, ids(store.Filter{}), 4)
	assert.Empty(t, ids(store.Filter{Session: "nobody"}))
}

func testNoAliasing(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	in := Ticket("s1", "u1", 1)
	want := normalize(in.Clone())
	got, _, err := s.Park(ctx, in, store.Caps{})
	require.NoError(t, err)
	want.ID, want.State = got.ID, store.Pending
	in.Effect[0], in.Card[0], in.Taint[0], in.Requester.Delegations[0] = 'X', 'X', "X", "X"
	got.Effect[0], got.Card[0], got.Taint[0], got.Requester.Delegations[0] = 'Y', 'Y', "Y", "Y"
	read, err := s.Get(ctx, got.ID)
	require.NoError(t, err)
	assert.Equal(t, want, normalize(read), "the store must not share slices with callers")
	read.Effect[0] = 'Z'
	again, err := s.Get(ctx, got.ID)
	require.NoError(t, err)
	assert.Equal(t, want, normalize(again))
}
