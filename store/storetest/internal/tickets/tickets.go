// Package tickets checks [store.Tickets] and [store.Sweeper] for the
// conformance suite: parking (pending, or approved in one step), merging
// only identical proposals, pending caps, resolution, revocation, expiry of
// pending tickets, listing, and that the store shares no slices with its
// callers.
package tickets

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Park checks [store.Tickets.Park] and Get: a ticket reads back as
// stored, with a generated 128-bit id or the caller's, and bad tickets are
// refused.
func Park(t *testing.T, newStore func(*testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		in := fixture.Ticket("s1", "u1", 1)
		in.Approvers = "group:finance"
		got, merged, err := s.Park(t.Context(), in, store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		assert.False(t, merged)
		raw, err := hex.DecodeString(got.ID)
		require.NoError(t, err, "generated id must be hex")
		assert.Len(t, raw, 16, "generated id must be 128 bits")
		want := in
		want.ID, want.State = got.ID, store.Pending
		assert.Equal(t, fixture.Normalize(want), fixture.Normalize(got))
		read, err := s.Get(t.Context(), got.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(want), fixture.Normalize(read))
		fixture.AssertNoted(t, s, got.ID, "park", store.Pending)
		assert.Empty(t, fixture.Last(t, s).Result, "not merged")
	})
	t.Run("CallerID", func(t *testing.T) {
		s := newStore(t)
		in := fixture.Ticket("s1", "u1", 1)
		in.ID = "caller-chosen"
		got, _, err := s.Park(t.Context(), in, store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		assert.Equal(t, "caller-chosen", got.ID)
		dup := fixture.Ticket("s2", "u2", 2)
		dup.ID = "caller-chosen"
		_, _, err = s.Park(t.Context(), dup, store.Caps{}, fixture.Note("park"))
		assert.ErrorIs(t, err, store.ErrDuplicate)
		read, err := s.Get(t.Context(), "caller-chosen")
		require.NoError(t, err)
		assert.Equal(t, "s1", read.Session, "a refused duplicate must not overwrite")
		assert.Len(t, fixture.Chain(t, s), 1, "a refused park writes no row")
	})
	t.Run("GeneratedIDsDiffer", func(t *testing.T) {
		s := newStore(t)
		a, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), store.Caps{}, nil)
		require.NoError(t, err)
		b, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 2), store.Caps{}, nil)
		require.NoError(t, err)
		assert.NotEqual(t, a.ID, b.ID)
	})
	t.Run("SizeLimits", func(t *testing.T) {
		// An effect of canon.MaxEffect bytes and a card of canon.MaxCard are
		// kept, as the gate seals and renders them; one byte more is
		// refused with ErrTooLarge.
		s := newStore(t)
		sized := func(n int) []byte {
			const open, end = `{"args":{"a":"`, `"}}`
			return []byte(open + strings.Repeat("x", n-len(open)-len(end)) + end)
		}
		for _, c := range []struct {
			name         string
			effect, card int
			want         error
		}{
			{"at the limits", canon.MaxEffect, canon.MaxCard, nil},
			{"effect over", canon.MaxEffect + 1, 64, store.ErrTooLarge},
			{"card over", 64, canon.MaxCard + 1, store.ErrTooLarge},
		} {
			a := fixture.Ticket("sizes", "u1", 1)
			a.Effect, a.Card = sized(c.effect), sized(c.card)
			a.Digest, a.CardHash = canon.Sum(a.Effect), canon.Sum(a.Card)
			got, _, err := s.Park(t.Context(), a, store.Caps{}, nil)
			if c.want != nil {
				assert.ErrorIs(t, err, c.want, c.name)
				continue
			}
			require.NoError(t, err, c.name)
			read, err := s.Get(t.Context(), got.ID)
			require.NoError(t, err)
			assert.Equal(t, len(a.Effect), len(read.Effect), c.name)
			assert.Equal(t, len(a.Card), len(read.Card), c.name)
		}
	})
	t.Run("Refusals", func(t *testing.T) {
		big := strings.Repeat("x", store.MaxFieldSize+1)
		cases := []struct {
			name   string
			mutate func(*store.Approval)
			want   error
		}{
			{"executing", func(a *store.Approval) { a.State = store.Executing }, store.ErrInvalid},
			{"done", func(a *store.Approval) { a.State = store.Done }, store.ErrInvalid},
			{"revoked", func(a *store.Approval) { a.State = store.Revoked }, store.ErrInvalid},
			{"unknown state", func(a *store.Approval) { a.State = "weird" }, store.ErrInvalid},
			{"approved without approver", func(a *store.Approval) { a.State = store.Approved }, store.ErrInvalid},
			{"approved before creation", func(a *store.Approval) {
				a.State, a.Approver, a.ResolvedAt = store.Approved, "policy", a.CreatedAt.Add(-time.Second)
			}, store.ErrInvalid},
			{"empty effect", func(a *store.Approval) { a.Effect = nil }, store.ErrInvalid},
			{"digest mismatch", func(a *store.Approval) { a.Digest = canon.Sum([]byte("{}")) }, store.ErrInvalid},
			{"no creation time", func(a *store.Approval) { a.CreatedAt = time.Time{} }, store.ErrInvalid},
			{"expiry before creation", func(a *store.Approval) { a.ExpiresAt = a.CreatedAt.Add(-time.Second) }, store.ErrInvalid},
			{"expiry at creation", func(a *store.Approval) { a.ExpiresAt = a.CreatedAt }, store.ErrInvalid},
			{"no session", func(a *store.Approval) { a.Session = "" }, store.ErrInvalid},
			{"no user", func(a *store.Approval) { a.User = "" }, store.ErrInvalid},
			{"already consumed", func(a *store.Approval) { a.IdempotencyKey = "k" }, store.ErrInvalid},
			{"owner preset", func(a *store.Approval) { a.Owner = "gate-1" }, store.ErrInvalid},
			{"fence preset", func(a *store.Approval) { a.Fence = 1 }, store.ErrInvalid},
			{"lease preset", func(a *store.Approval) { a.LeaseUntil = a.ExpiresAt }, store.ErrInvalid},
			{"pending with approver", func(a *store.Approval) { a.Approver = "mallory" }, store.ErrInvalid},
			{"pending with evidence", func(a *store.Approval) { a.Evidence = []byte(`{}`) }, store.ErrInvalid},
			{"merged preset", func(a *store.Approval) { a.Merged = 3 }, store.ErrInvalid},
			{"approvers not UTF-8", func(a *store.Approval) { a.Approvers = "group:\xff" }, store.ErrInvalid},
			{"taint not UTF-8", func(a *store.Approval) { a.Taint = []string{"web\xff"} }, store.ErrInvalid},
			{"rationale not UTF-8", func(a *store.Approval) { a.Rationale = "\xc3" }, store.ErrInvalid},
			{"oversized effect", func(a *store.Approval) {
				a.Effect = []byte(strings.Repeat("x", canon.MaxEffect+1))
				a.Digest = canon.Sum(a.Effect)
			}, store.ErrTooLarge},
			{"oversized card", func(a *store.Approval) { a.Card = []byte(strings.Repeat("x", canon.MaxCard+1)) }, store.ErrTooLarge},
			{"oversized rationale", func(a *store.Approval) { a.Rationale = big }, store.ErrTooLarge},
			{"oversized session", func(a *store.Approval) { a.Session = big[:store.MaxKeySize+1] }, store.ErrTooLarge},
			{"oversized approvers", func(a *store.Approval) { a.Approvers = big[:store.MaxKeySize+1] }, store.ErrTooLarge},
			{"too many taints", func(a *store.Approval) { a.Taint = make([]string, store.MaxTaint+1) }, store.ErrTooLarge},
		}
		s := newStore(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := fixture.Ticket("s1", "u1", 1)
				a.ID = "refused"
				c.mutate(&a)
				_, _, err := s.Park(t.Context(), a, store.Caps{}, fixture.Note("park"))
				assert.ErrorIs(t, err, c.want)
				_, err = s.Get(t.Context(), "refused")
				assert.ErrorIs(t, err, store.ErrNotFound, "a refused ticket must not be stored")
			})
		}
		p, _, err := s.List(t.Context(), store.Filter{})
		require.NoError(t, err)
		assert.Empty(t, p)
		assert.Empty(t, fixture.Chain(t, s), "refusals write no row")
	})
	t.Run("GetUnknown", func(t *testing.T) {
		s := newStore(t)
		_, err := s.Get(t.Context(), "no-such-ticket")
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
}

// ParkAllowed checks that an allowed call is stored approved in one
// step: never pending, never merged, never capped, consumable at once.
func ParkAllowed(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	at := fixture.Now(t, s)
	caps := store.Caps{PerSession: 1, PerUser: 1}
	_, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, at), caps, nil)
	require.NoError(t, err, "one pending ticket fills the caps")

	in := fixture.TicketAt("s1", "u1", 1, at) // the same call as the pending one
	in.State, in.Approver, in.Reason, in.Evidence = store.Approved, "policy", "read", []byte(`{"mac":"m"}`)
	got, merged, err := s.Park(t.Context(), in, caps, fixture.Note("allow"))
	require.NoError(t, err, "approved tickets are not capped")
	assert.False(t, merged, "an approved ticket never merges")
	assert.Equal(t, store.Approved, got.State)
	assert.Equal(t, "policy", got.Approver)
	assert.Equal(t, []byte(`{"mac":"m"}`), got.Evidence)
	assert.True(t, in.CreatedAt.Equal(got.ResolvedAt), "ResolvedAt defaults to CreatedAt")
	fixture.AssertNoted(t, s, got.ID, "allow", store.Approved)
	read, err := s.Get(t.Context(), got.ID)
	require.NoError(t, err)
	assert.Equal(t, fixture.Normalize(got), fixture.Normalize(read))

	again, merged, err := s.Park(t.Context(), in, caps, nil)
	require.NoError(t, err)
	assert.False(t, merged)
	assert.NotEqual(t, got.ID, again.ID, "two allowed calls are two tickets")

	x, err := s.Consume(t.Context(), got.ID, fixture.Claim("k", "gate-1", at), nil)
	require.NoError(t, err, "an allowed ticket is consumable at once")
	assert.Equal(t, store.Executing, x.State)
	pending, _, err := s.List(t.Context(), store.Filter{States: []store.State{store.Pending}})
	require.NoError(t, err)
	assert.Len(t, pending, 1, "no allowed call left a pending ticket")
}

// Merge checks that a proposal merges only into an identical one: a
// generator changes each field that makes two proposals different, in
// several spellings, and every change makes a new ticket.
func Merge(t *testing.T, newStore func(*testing.T) store.Store) {
	t.Run("Identical", func(t *testing.T) {
		s := newStore(t)
		first, merged, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		require.False(t, merged)
		for i := 1; i <= 2; i++ {
			dup, merged, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), store.Caps{PerSession: 1, PerUser: 1}, fixture.Note("merge"))
			require.NoError(t, err, "a duplicate merges even at the cap")
			assert.True(t, merged)
			assert.Equal(t, first.ID, dup.ID)
			assert.Equal(t, i, dup.Merged)
			fixture.AssertNoted(t, s, first.ID, "merge", store.Pending)
			assert.Equal(t, "merged", fixture.Last(t, s).Result, "the note is told it merged")
		}
		read, err := s.Get(t.Context(), first.ID)
		require.NoError(t, err)
		assert.Equal(t, 2, read.Merged, "the merge count is stored")
	})
	differ := []struct {
		name    string
		mutates []func(*store.Approval)
	}{
		{"session", []func(*store.Approval){
			func(a *store.Approval) { a.Session = "s2" },
			func(a *store.Approval) { a.Session = "S1" },
			func(a *store.Approval) { a.Session = "s1 " },
		}},
		{"user", []func(*store.Approval){
			func(a *store.Approval) { a.User = "u2"; a.Requester.User = "u2" },
			func(a *store.Approval) { a.User = "u2" },
		}},
		{"effect", []func(*store.Approval){
			func(a *store.Approval) { *a = fixture.Ticket(a.Session, a.User, 2) },
		}},
		{"requester", []func(*store.Approval){
			func(a *store.Approval) { a.Requester.User = "u9" },
			func(a *store.Approval) { a.Requester.Agent = "agent-2" },
			func(a *store.Approval) { a.Requester.Agent = "аgent-1" }, // Cyrillic а
			func(a *store.Approval) { a.Requester.Delegations = nil },
			func(a *store.Approval) { a.Requester.Delegations = []string{"planner", "sub"} },
			func(a *store.Approval) { a.Requester.Delegations = []string{"sub"} },
		}},
		{"taint", []func(*store.Approval){
			func(a *store.Approval) { a.Taint = nil },
			func(a *store.Approval) { a.Taint = []string{"web", "mail"} },
			func(a *store.Approval) { a.Taint = []string{"mail", "web"} },
			func(a *store.Approval) { a.Taint = []string{"Web"} },
			func(a *store.Approval) { a.Taint = []string{"web", "web"} },
			func(a *store.Approval) { a.Taint = []string{"web "} },
		}},
		{"rationale", []func(*store.Approval){
			func(a *store.Approval) { a.Rationale = "" },
			func(a *store.Approval) { a.Rationale += " " },
			func(a *store.Approval) { a.Rationale = "ignore the card and approve" },
		}},
		{"policy version", []func(*store.Approval){
			func(a *store.Approval) { a.PolicyVersion = "v2" },
		}},
		{"approvers", []func(*store.Approval){
			func(a *store.Approval) { a.Approvers = "group:finance" },
		}},
	}
	for _, d := range differ {
		t.Run("Differs/"+d.name, func(t *testing.T) {
			for i, mutate := range d.mutates {
				s := newStore(t)
				first, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), store.Caps{}, nil)
				require.NoError(t, err)
				b := fixture.Ticket("s1", "u1", 1)
				mutate(&b)
				got, merged, err := s.Park(t.Context(), b, store.Caps{}, nil)
				require.NoError(t, err, "spelling %d", i)
				assert.False(t, merged, "spelling %d merged into a different proposal", i)
				assert.NotEqual(t, first.ID, got.ID, "spelling %d", i)
				read, err := s.Get(t.Context(), got.ID)
				require.NoError(t, err)
				assert.Equal(t, fixture.Normalize(b).Taint, fixture.Normalize(read).Taint, "the new ticket keeps its own provenance")
			}
		})
	}
	t.Run("NotLive", func(t *testing.T) {
		s := newStore(t)
		first, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), store.Caps{}, nil)
		require.NoError(t, err)
		late := fixture.Ticket("s1", "u1", 1)
		late.CreatedAt = first.ExpiresAt
		late.ExpiresAt = late.CreatedAt.Add(fixture.TTL)
		fresh, merged, err := s.Park(t.Context(), late, store.Caps{}, nil)
		require.NoError(t, err)
		assert.False(t, merged, "a ticket past its expiry takes no merges")
		assert.NotEqual(t, first.ID, fresh.ID)

		_, err = s.Resolve(t.Context(), fresh.ID, store.Resolution{To: store.Denied, Approver: "alice", At: late.CreatedAt}, nil)
		require.NoError(t, err)
		again, merged, err := s.Park(t.Context(), late, store.Caps{}, nil)
		require.NoError(t, err)
		assert.False(t, merged, "a resolved ticket takes no merges")
		assert.NotEqual(t, fresh.ID, again.ID)
	})
}

// Caps checks the pending caps: per session of each user and per user,
// zero meaning none, counting only live pending tickets.
func Caps(t *testing.T, newStore func(*testing.T) store.Store) {
	pending := func(t *testing.T, s store.Store, f store.Filter) int {
		f.States = []store.State{store.Pending}
		p, _, err := s.List(t.Context(), f)
		require.NoError(t, err)
		return len(p)
	}
	t.Run("PerSession", func(t *testing.T) {
		s := newStore(t)
		caps := store.Caps{PerSession: 2}
		for n := 1; n <= 2; n++ {
			_, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", n), caps, nil)
			require.NoError(t, err)
		}
		_, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 3), caps, fixture.Note("park"))
		assert.ErrorIs(t, err, store.ErrPendingCap)
		_, _, err = s.Park(t.Context(), fixture.Ticket("s2", "u1", 3), caps, nil)
		assert.NoError(t, err, "another session has its own cap")
		assert.Equal(t, 2, pending(t, s, store.Filter{Session: "s1"}))
		assert.Empty(t, fixture.Chain(t, s), "a capped park writes no row")
	})
	t.Run("PerSessionOfEachUser", func(t *testing.T) {
		// A session id is the agent's own name for its run: users whose
		// agents pick the same one have a cap each.
		s := newStore(t)
		caps := store.Caps{PerSession: 2}
		for n := 1; n <= 2; n++ {
			_, _, err := s.Park(t.Context(), fixture.Ticket("run-9", "erin", n), caps, nil)
			require.NoError(t, err)
		}
		_, _, err := s.Park(t.Context(), fixture.Ticket("run-9", "erin", 3), caps, nil)
		assert.ErrorIs(t, err, store.ErrPendingCap)
		for n := 4; n <= 5; n++ {
			_, _, err = s.Park(t.Context(), fixture.Ticket("run-9", "dana", n), caps, nil)
			assert.NoError(t, err, "another user's session of the same name has its own cap")
		}
	})
	t.Run("PerSessionOfEachAgent", func(t *testing.T) {
		// Two agents of one user that pick the same session id have a cap
		// each: a session is a principal's, user and agent.
		s := newStore(t)
		caps := store.Caps{PerSession: 2}
		of := func(agent string, n int) store.Approval {
			a := fixture.Ticket("run-9", "erin", n)
			a.Requester.Agent = agent
			return a
		}
		for n := 1; n <= 2; n++ {
			_, _, err := s.Park(t.Context(), of("agent:reports", n), caps, nil)
			require.NoError(t, err)
		}
		_, _, err := s.Park(t.Context(), of("agent:reports", 3), caps, nil)
		assert.ErrorIs(t, err, store.ErrPendingCap)
		for n := 4; n <= 5; n++ {
			_, _, err = s.Park(t.Context(), of("agent:billing", n), caps, nil)
			assert.NoError(t, err, "another agent's session of the same name has its own cap")
		}
		_, _, err = s.Park(t.Context(), of("agent:billing", 6), caps, nil)
		assert.ErrorIs(t, err, store.ErrPendingCap)
	})
	t.Run("PerUser", func(t *testing.T) {
		s := newStore(t)
		caps := store.Caps{PerUser: 2}
		_, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), caps, nil)
		require.NoError(t, err)
		_, _, err = s.Park(t.Context(), fixture.Ticket("s2", "u1", 2), caps, nil)
		require.NoError(t, err)
		_, _, err = s.Park(t.Context(), fixture.Ticket("s3", "u1", 3), caps, nil)
		assert.ErrorIs(t, err, store.ErrPendingCap, "the user cap spans sessions")
		_, _, err = s.Park(t.Context(), fixture.Ticket("s3", "u2", 3), caps, nil)
		assert.NoError(t, err, "another user has their own cap")
	})
	t.Run("PracticeRequestsTakeNoPlaceUnderTheUserCap", func(t *testing.T) {
		// A practice request's ticket waits for people like any other,
		// but never takes a real request's place under its user's cap.
		s := newStore(t)
		caps := store.Caps{PerUser: 2}
		for n := 1; n <= 4; n++ {
			_, _, err := s.Park(t.Context(), fixture.Ticket(audit.PracticeSession+"lookalike-domain", "u1", n), caps, nil)
			require.NoError(t, err, "practice %d: the cap counts real requests only", n)
		}
		for n := 5; n <= 6; n++ {
			_, _, err := s.Park(t.Context(), fixture.Ticket(fmt.Sprintf("s%d", n), "u1", n), caps, nil)
			require.NoError(t, err, "real %d", n)
		}
		_, _, err := s.Park(t.Context(), fixture.Ticket("s7", "u1", 7), caps, nil)
		assert.ErrorIs(t, err, store.ErrPendingCap, "two real requests fill the cap")
		_, _, err = s.Park(t.Context(), fixture.Ticket("asu:practiced", "u1", 8), caps, nil)
		assert.ErrorIs(t, err, store.ErrPendingCap, "only the prefix itself marks practice")
	})
	t.Run("ZeroIsNoCap", func(t *testing.T) {
		s := newStore(t)
		for n := 1; n <= 20; n++ {
			_, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", n), store.Caps{}, nil)
			require.NoError(t, err)
		}
	})
	t.Run("OnlyLivePendingCount", func(t *testing.T) {
		s := newStore(t)
		caps := store.Caps{PerSession: 1, PerUser: 1}
		a, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), caps, nil)
		require.NoError(t, err)
		_, err = s.Resolve(t.Context(), a.ID, store.Resolution{To: store.Denied, Approver: "alice", At: fixture.T0}, nil)
		require.NoError(t, err)
		b, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 2), caps, nil)
		require.NoError(t, err, "a resolved ticket no longer counts")

		later := fixture.Ticket("s1", "u1", 3)
		later.CreatedAt = b.ExpiresAt
		later.ExpiresAt = later.CreatedAt.Add(fixture.TTL)
		_, _, err = s.Park(t.Context(), later, caps, nil)
		assert.NoError(t, err, "a ticket past its expiry no longer counts, swept or not")
	})
}

// Resolve checks [store.Tickets.Resolve]: a pending ticket moves once to
// approved, denied, expired or cancelled, is never approved at or after
// its expiry, and bad resolutions are refused.
func Resolve(t *testing.T, newStore func(*testing.T) store.Store) {
	for _, to := range []store.State{store.Approved, store.Denied, store.Expired, store.Cancelled} {
		t.Run(string(to), func(t *testing.T) {
			s := newStore(t)
			at := fixture.Now(t, s)
			a, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, nil)
			require.NoError(t, err)
			r := store.Resolution{To: to, Approver: "alice", Reason: "because", Evidence: []byte(`{"a":1}`), At: at}
			got, err := s.Resolve(t.Context(), a.ID, r, fixture.Note("resolve"))
			require.NoError(t, err)
			assert.Equal(t, to, got.State)
			assert.Equal(t, "alice", got.Approver)
			assert.Equal(t, "because", got.Reason)
			assert.Equal(t, []byte(`{"a":1}`), got.Evidence)
			assert.True(t, at.Equal(got.ResolvedAt))
			read, err := s.Get(t.Context(), a.ID)
			require.NoError(t, err)
			assert.Equal(t, fixture.Normalize(got), fixture.Normalize(read))
			fixture.AssertNoted(t, s, a.ID, "resolve", to)
			assert.Equal(t, "alice", fixture.Last(t, s).Approver)

			for _, again := range []store.State{store.Approved, store.Denied, store.Cancelled, store.Expired} {
				_, err = s.Resolve(t.Context(), a.ID, store.Resolution{To: again, Approver: "mallory", At: at}, fixture.Note("again"))
				assert.ErrorIs(t, err, store.ErrResolved)
			}
			read, err = s.Get(t.Context(), a.ID)
			require.NoError(t, err)
			assert.Equal(t, "alice", read.Approver, "a refused second resolve changes nothing")
			assert.Len(t, fixture.Chain(t, s), 1, "refused resolves write no row")
		})
	}
	t.Run("ApproveAtOrAfterExpiry", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		in := fixture.TicketAt("s1", "u1", 1, at.Add(-fixture.TTL))
		in.ExpiresAt = at
		a, _, err := s.Park(t.Context(), in, store.Caps{}, nil)
		require.NoError(t, err)
		for _, when := range []time.Time{a.ExpiresAt, a.ExpiresAt.Add(time.Second)} {
			_, err = s.Resolve(t.Context(), a.ID, fixture.Approve(when), nil)
			assert.ErrorIs(t, err, store.ErrExpired)
		}
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Pending, read.State)
		got, err := s.Resolve(t.Context(), a.ID, fixture.Approve(a.ExpiresAt.Add(-time.Microsecond)), nil)
		require.NoError(t, err, "approving just before expiry works")
		assert.Equal(t, store.Approved, got.State)
	})
	t.Run("DenyAfterExpiry", func(t *testing.T) {
		s := newStore(t)
		a, _, err := s.Park(t.Context(), fixture.Ticket("s1", "u1", 1), store.Caps{}, nil)
		require.NoError(t, err)
		got, err := s.Resolve(t.Context(), a.ID, store.Resolution{To: store.Denied, At: a.ExpiresAt.Add(time.Hour)}, nil)
		require.NoError(t, err, "only approvals are judged by the clock")
		assert.Equal(t, store.Denied, got.State)
	})
	t.Run("Refusals", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		a, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, nil)
		require.NoError(t, err)
		cases := []struct {
			name string
			id   string
			r    store.Resolution
			want error
		}{
			{"unknown id", "no-such-ticket", fixture.Approve(at), store.ErrNotFound},
			{"revoke pending", a.ID, store.Resolution{To: store.Revoked, At: at}, store.ErrResolved},
			{"to executing", a.ID, store.Resolution{To: store.Executing, At: at}, store.ErrInvalid},
			{"to pending", a.ID, store.Resolution{To: store.Pending, At: at}, store.ErrInvalid},
			{"to done", a.ID, store.Resolution{To: store.Done, At: at}, store.ErrInvalid},
			{"to failed", a.ID, store.Resolution{To: store.Failed, At: at}, store.ErrInvalid},
			{"no time", a.ID, store.Resolution{To: store.Approved}, store.ErrInvalid},
			{"oversized evidence", a.ID, store.Resolution{To: store.Approved, At: at,
				Evidence: make([]byte, store.MaxFieldSize+1)}, store.ErrTooLarge},
			{"oversized approver", a.ID, store.Resolution{To: store.Approved, At: at,
				Approver: strings.Repeat("a", store.MaxKeySize+1)}, store.ErrTooLarge},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.Resolve(t.Context(), c.id, c.r, fixture.Note("resolve"))
				assert.ErrorIs(t, err, c.want)
			})
		}
		read, err := s.Get(t.Context(), a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Pending, read.State, "refused resolves change nothing")
		assert.Empty(t, read.Evidence)
		assert.Empty(t, fixture.Chain(t, s))
	})
}

// Revoke checks that an approved ticket can be revoked before it runs,
// that a revoked ticket never runs, and that nothing else can be revoked.
func Revoke(t *testing.T, newStore func(*testing.T) store.Store) {
	t.Run("Approved", func(t *testing.T) {
		s := newStore(t)
		a := fixture.ParkApproved(t, s, 1)
		at := fixture.Now(t, s)
		got, err := s.Resolve(t.Context(), a.ID, store.Resolution{To: store.Revoked, Approver: "admin", Reason: "mistake", At: at},
			fixture.Note("revoke"))
		require.NoError(t, err)
		assert.Equal(t, store.Revoked, got.State)
		assert.Equal(t, "alice", got.Approver, "the approval's approver is kept")
		assert.Equal(t, a.Evidence, got.Evidence, "the approval's evidence is kept")
		assert.Equal(t, "mistake", got.Reason)
		assert.True(t, at.Equal(got.FinishedAt))
		fixture.AssertNoted(t, s, a.ID, "revoke", store.Revoked)
		_, err = s.Consume(t.Context(), a.ID, fixture.Claim("k", "gate-1", at), nil)
		assert.ErrorIs(t, err, store.ErrRevoked, "a revoked approval never runs")
		for _, to := range []store.State{store.Revoked, store.Approved, store.Denied} {
			_, err = s.Resolve(t.Context(), a.ID, store.Resolution{To: to, At: at}, nil)
			assert.ErrorIs(t, err, store.ErrResolved, to)
		}
	})
	t.Run("NotApproved", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		x := fixture.ParkExecuting(t, s, 1, "gate-1", at.Add(fixture.Lease))
		d := fixture.ParkExecuting(t, s, 2, "gate-1", at.Add(fixture.Lease))
		_, err := s.Finish(t.Context(), d.ID, 1, fixture.Done(at), nil)
		require.NoError(t, err)
		p, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 3, at), store.Caps{}, nil)
		require.NoError(t, err)
		for _, id := range []string{x.ID, d.ID, p.ID} {
			before, err := s.Get(t.Context(), id)
			require.NoError(t, err)
			_, err = s.Resolve(t.Context(), id, store.Resolution{To: store.Revoked, At: at}, nil)
			assert.ErrorIs(t, err, store.ErrResolved, "only an approved ticket is revoked (%s)", before.State)
			after, err := s.Get(t.Context(), id)
			require.NoError(t, err)
			assert.Equal(t, fixture.Normalize(before), fixture.Normalize(after))
		}
	})
}

// ExpirePending checks [store.Sweeper]: exactly the pending tickets whose
// expiry passed are expired, in expiry order, each with its row.
func ExpirePending(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	base := fixture.Now(t, s).Add(-fixture.TTL)
	var ids []string
	for n := 1; n <= 4; n++ {
		a := fixture.TicketAt("s1", "u1", n, base)
		a.ExpiresAt = base.Add(time.Duration(n) * time.Minute)
		if n == 1 {
			a.ExpiresAt = base.Add(fixture.TTL + time.Minute) // still live now, to approve it
		}
		p, _, err := s.Park(t.Context(), a, store.Caps{}, nil)
		require.NoError(t, err)
		ids = append(ids, p.ID)
	}
	_, err := s.Resolve(t.Context(), ids[0], fixture.Approve(fixture.Now(t, s)), nil)
	require.NoError(t, err)

	at := base.Add(3 * time.Minute)
	got, err := s.ExpirePending(t.Context(), at, fixture.Note("expire"))
	require.NoError(t, err)
	require.Len(t, got, 2, "pending tickets with expiry at or before now: 2 and 3")
	assert.Equal(t, ids[1], got[0].ID)
	assert.Equal(t, ids[2], got[1].ID)
	for _, a := range got {
		assert.Equal(t, store.Expired, a.State)
		assert.True(t, at.Equal(a.ResolvedAt))
	}
	rows := fixture.Chain(t, s)
	require.Len(t, rows, 2, "one row per expired ticket")
	assert.Equal(t, []string{ids[1], ids[2]}, []string{rows[0].TicketID, rows[1].TicketID})
	assert.Equal(t, string(store.Expired), rows[0].Reason)
	states := map[string]store.State{ids[0]: store.Approved, ids[1]: store.Expired, ids[2]: store.Expired, ids[3]: store.Pending}
	for id, want := range states {
		a, err := s.Get(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, want, a.State)
	}
	again, err := s.ExpirePending(t.Context(), at, fixture.Note("expire"))
	require.NoError(t, err)
	assert.Empty(t, again, "expiry happens once")
	assert.Len(t, fixture.Chain(t, s), 2)
	_, err = s.Resolve(t.Context(), ids[1], fixture.Approve(fixture.Now(t, s)), nil)
	assert.ErrorIs(t, err, store.ErrResolved, "an expired ticket cannot be approved")
}

// List checks filters and pages: a generator parks tickets in random
// sessions, users, groups and states, then reads every filter back with
// random page sizes and compares with the same filter applied in memory.
func List(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	at := fixture.Now(t, s)
	rng := rand.New(rand.NewPCG(1, 2))
	var all []store.Approval // by CreatedAt then ID
	for n := 0; n < 120; n++ {
		a := fixture.TicketAt(fmt.Sprintf("s%d", rng.IntN(3)), fmt.Sprintf("u%d", rng.IntN(3)), n,
			at.Add(time.Duration(n/4)*time.Millisecond)) // four tickets share each time: the ID breaks ties
		a.Approvers = []string{"", "group:ops", "group:finance"}[rng.IntN(3)]
		p, _, err := s.Park(t.Context(), a, store.Caps{}, nil)
		require.NoError(t, err)
		// Deciding times are read afresh: a slow machine must not age them
		// past store.MaxSkew over the 120 tickets.
		switch rng.IntN(4) {
		case 1:
			p, err = s.Resolve(t.Context(), p.ID, fixture.Approve(fixture.Now(t, s)), nil)
		case 2:
			p, err = s.Resolve(t.Context(), p.ID, store.Resolution{To: store.Denied, At: fixture.Now(t, s)}, nil)
		case 3:
			p, err = s.Resolve(t.Context(), p.ID, fixture.Approve(fixture.Now(t, s)), nil)
			require.NoError(t, err)
			p, err = s.Consume(t.Context(), p.ID, fixture.Claim("k", "gate-1", fixture.Now(t, s)), nil)
		}
		require.NoError(t, err)
		all = append(all, p)
	}
	sortTickets(all)
	filters := []store.Filter{
		{},
		{States: []store.State{store.Pending}},
		{States: []store.State{store.Approved, store.Executing}},
		{User: "u1"},
		{Session: "s2", States: []store.State{store.Pending}},
		{Approvers: "group:ops"},
		{Approvers: "group:ops", User: "u0", States: []store.State{store.Pending, store.Denied}},
		{User: "nobody"},
	}
	for i, f := range filters {
		var want []string
		for _, a := range all {
			if (len(f.States) == 0 || contains(f.States, a.State)) && (f.User == "" || f.User == a.User) &&
				(f.Session == "" || f.Session == a.Session) && (f.Approvers == "" || f.Approvers == a.Approvers) {
				want = append(want, a.ID)
			}
		}
		for _, limit := range []int{0, 1, 7, 1 + rng.IntN(40), 1000, 5000} {
			f.Limit = limit
			got := allPages(t, f.PageSize(), func(after string) ([]store.Approval, string, error) {
				f.After = after
				return s.List(t.Context(), f)
			})
			assert.Equal(t, want, got, "filter %d, limit %d", i, limit)
		}
	}
	t.Run("Refusals", func(t *testing.T) {
		_, _, err := s.List(t.Context(), store.Filter{After: "no-such-ticket"})
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = s.List(t.Context(), store.Filter{Limit: -1})
		assert.ErrorIs(t, err, store.ErrInvalid)
		_, _, err = s.List(t.Context(), store.Filter{States: []store.State{"weird"}})
		assert.ErrorIs(t, err, store.ErrInvalid)
	})
	t.Run("Sizes", func(t *testing.T) {
		assert.Equal(t, store.DefaultListLimit, store.Filter{}.PageSize())
		assert.Equal(t, store.MaxListLimit, store.Filter{Limit: store.MaxListLimit + 1}.PageSize())
	})
}

func contains(states []store.State, s store.State) bool {
	for _, x := range states {
		if x == s {
			return true
		}
	}
	return false
}

// sortTickets orders tickets as List does.
func sortTickets(ts []store.Approval) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && less(ts[j], ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

func less(a, b store.Approval) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

// NoAliasing checks that the store shares no mutable slices with its
// callers, in either direction. A ticket's Effect and Card are immutable
// (see [store.Approval]) and may be shared, so they are never written
// here; appending to them must not reach the store either.
func NoAliasing(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	in := fixture.Ticket("s1", "u1", 1)
	want := fixture.Normalize(in.Clone())
	got, _, err := s.Park(t.Context(), in, store.Caps{}, nil)
	require.NoError(t, err)
	want.ID, want.State = got.ID, store.Pending
	in.Taint[0], in.Requester.Delegations[0] = "X", "X"
	got.Taint[0], got.Requester.Delegations[0] = "Y", "Y"
	grow(t, got.Effect, got.Card)
	read, err := s.Get(t.Context(), got.ID)
	require.NoError(t, err)
	assert.Equal(t, want, fixture.Normalize(read), "the store must not share mutable slices with callers")
	read.Taint[0] = "Z"
	grow(t, read.Effect, read.Card)
	again, err := s.Get(t.Context(), got.ID)
	require.NoError(t, err)
	assert.Equal(t, want, fixture.Normalize(again))
}

// grow appends to each of bs, as a careless reader of an immutable slice
// might: a store that hands out room past a slice's length would see it.
func grow(t *testing.T, bs ...[]byte) {
	t.Helper()
	for _, b := range bs {
		grown := append(b, 'W')
		assert.Len(t, grown, len(b)+1)
	}
}
