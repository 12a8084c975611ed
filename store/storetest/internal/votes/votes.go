// Package votes checks [store.Votes] for the conformance suite: the first
// showing counts, votes approve a ticket at its quorum exactly once, an
// approver counts once, refusals change nothing, and votes travel with
// the ticket, under concurrent voters too.
package votes

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Votes checks [store.Votes]: the first showing counts, votes
// accumulate in order and approve the ticket at its quorum exactly once,
// an approver counts once, every refusal leaves the ticket and the chain
// as they were, each accepted vote has its row, and votes and showings
// travel with the ticket through every read and transition.
func Votes(t *testing.T, newStore func(*testing.T) store.Store, n int) {
	t.Run("Show", func(t *testing.T) { testShow(t, newStore) })
	t.Run("Quorum", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		at := fixture.Now(t, s)
		p, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		want := p
		for i, who := range []string{"alice", "bob", "carol"} {
			v := fixture.Vote(who, at)
			got, err := s.Vote(ctx, p.ID, v, 3, "three of finance", fixture.Note("vote"))
			require.NoError(t, err, who)
			want.Votes = append(want.Votes, v)
			if i == 2 {
				want.State, want.Approver, want.Reason, want.ResolvedAt = store.Approved, "carol", "three of finance", at
			}
			assert.Equal(t, fixture.Normalize(want), fixture.Normalize(got), "%s: the vote is added in order, nothing else changes", who)
			read, err := s.Get(ctx, p.ID)
			require.NoError(t, err)
			assert.Equal(t, fixture.Normalize(got), fixture.Normalize(read), "%s: returned as stored", who)
			fixture.AssertNoted(t, s, p.ID, "vote", want.State)
			assert.Equal(t, want.Approver, fixture.Last(t, s).Approver, "the note saw the approver only once approved")
		}
		assert.Nil(t, want.Evidence, "an approval by votes keeps each vote's evidence, none of its own")
		require.Len(t, fixture.Chain(t, s), 4, "one row for the park and one per vote")

		// Approved exactly once: no later vote, repeated or new, counts.
		for _, who := range []string{"dave", "alice"} {
			_, err = s.Vote(ctx, p.ID, fixture.Vote(who, at), 3, "again", fixture.Note("vote"))
			assert.ErrorIs(t, err, store.ErrResolved, who)
		}
		_, err = s.Vote(ctx, p.ID, fixture.Vote("erin", at), 2, "a smaller quorum", fixture.Note("vote"))
		assert.ErrorIs(t, err, store.ErrResolved, "a smaller quorum does not approve twice")
		read, err := s.Get(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(want), fixture.Normalize(read))
		assert.Len(t, fixture.Chain(t, s), 4, "refused votes write no row")
	})
	t.Run("Duplicate", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		at := fixture.Now(t, s)
		p, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		first, err := s.Vote(ctx, p.ID, fixture.Vote("alice", at), 2, "two", fixture.Note("vote"))
		require.NoError(t, err)
		again := store.Vote{Approver: "alice", Evidence: []byte(`{"sig":"other"}`), At: at}
		_, err = s.Vote(ctx, p.ID, again, 2, "two", fixture.Note("vote"))
		require.ErrorIs(t, err, store.ErrDuplicate, "one person voting twice counts once")
		read, err := s.Get(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(first), fixture.Normalize(read), "the first vote stands, pending")
		assert.Len(t, fixture.Chain(t, s), 2)
	})
	t.Run("Refusals", func(t *testing.T) { testVoteRefusals(t, newStore) })
	t.Run("Notes", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		at := fixture.Now(t, s)
		p, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, nil)
		require.NoError(t, err)
		one, err := s.Vote(ctx, p.ID, fixture.Vote("alice", at), 2, "two", nil)
		require.NoError(t, err, "a nil note")
		assert.Empty(t, fixture.Chain(t, s), "a nil note writes no row")
		assert.Len(t, one.Votes, 1, "but the vote counts")
		_, err = s.Vote(ctx, p.ID, fixture.Vote("bob", at), 2, "two", fixture.BadNote)
		require.ErrorIs(t, err, store.ErrInvalid, "a record the chain refuses fails the approving vote")
		read, err := s.Get(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, fixture.Normalize(one), fixture.Normalize(read), "neither the vote nor the approval is kept")
		assert.Empty(t, fixture.Chain(t, s))
		got, err := s.Vote(ctx, p.ID, fixture.Vote("bob", at), 2, "two", fixture.Note("vote"))
		require.NoError(t, err, "the refused vote left nothing behind")
		assert.Equal(t, store.Approved, got.State)
		fixture.AssertNoted(t, s, p.ID, "vote", store.Approved)
	})
	t.Run("Travel", func(t *testing.T) { testVotesTravel(t, newStore) })
	t.Run("NoAliasing", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		at := fixture.Now(t, s)
		p, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, nil)
		require.NoError(t, err)
		v := fixture.Vote("alice", at)
		got, err := s.Vote(ctx, p.ID, v, 3, "three", nil)
		require.NoError(t, err)
		want := fixture.Normalize(got.Clone())
		v.Evidence[0] = 'X'
		got.Votes[0].Evidence[0], got.Votes[0].Approver = 'Y', "mallory"
		scribble := func(a store.Approval, merged bool) audit.Record {
			for i := range a.Votes {
				a.Votes[i].Evidence[0], a.Votes[i].Approver = 'Z', "eve"
			}
			return fixture.Note("vote")(a, merged)
		}
		got, err = s.Vote(ctx, p.ID, fixture.Vote("bob", at), 3, "three", scribble)
		require.NoError(t, err)
		want.Votes = append(want.Votes, fixture.Vote("bob", at))
		assert.Equal(t, want.Votes, fixture.Normalize(got).Votes, "neither the caller's nor the note's copies are the store's")
		got.Votes[1].Evidence[0] = 'W'
		shown, err := s.Show(ctx, p.ID, at)
		require.NoError(t, err)
		shown.Votes[0].Evidence[0] = 'V'
		read, err := s.Get(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, want.Votes, fixture.Normalize(read).Votes, "the store must not share votes with callers")
		read.Votes[0].Evidence[0] = 'U'
		again, err := s.Get(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, want.Votes, fixture.Normalize(again).Votes)
	})
	t.Run("Concurrent", func(t *testing.T) { testVotesConcurrent(t, newStore, n) })
	t.Run("Reopen", func(t *testing.T) { testReopen(t, newStore, n) })
	t.Run("Early", func(t *testing.T) { testEarly(t, newStore) })
}

// testShow checks that the first showing is kept, later ones change
// nothing, showing writes no row and works in any state.
func testShow(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	at := fixture.Now(t, s)
	p, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, fixture.Note("park"))
	require.NoError(t, err)
	assert.True(t, p.ShownAt.IsZero(), "a new ticket has not been shown")
	got, err := s.Show(ctx, p.ID, at)
	require.NoError(t, err)
	want := p
	want.ShownAt = at
	assert.Equal(t, fixture.Normalize(want), fixture.Normalize(got), "showing sets ShownAt and nothing else")
	for _, later := range []time.Time{at.Add(time.Minute), at.Add(-time.Minute)} {
		again, err := s.Show(ctx, p.ID, later)
		require.NoError(t, err)
		assert.True(t, at.Equal(again.ShownAt), "the first showing counts")
	}
	read, err := s.Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, fixture.Normalize(want), fixture.Normalize(read))
	page, _, err := s.List(ctx, store.Filter{})
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.True(t, at.Equal(page[0].ShownAt), "List returns ShownAt")
	a, err := s.Resolve(ctx, p.ID, fixture.Approve(at), fixture.Note("approve"))
	require.NoError(t, err)
	assert.True(t, at.Equal(a.ShownAt), "a decision keeps ShownAt")

	// A ticket decided before anyone saw it may still be shown.
	d, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 2, at), store.Caps{}, nil)
	require.NoError(t, err)
	_, err = s.Resolve(ctx, d.ID, store.Resolution{To: store.Denied, At: at}, nil)
	require.NoError(t, err)
	d, err = s.Show(ctx, d.ID, at.Add(time.Second))
	require.NoError(t, err)
	assert.True(t, at.Add(time.Second).Equal(d.ShownAt))
	assert.Equal(t, store.Denied, d.State)

	_, err = s.Show(ctx, "no-such-ticket", at)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.Show(ctx, p.ID, time.Time{})
	assert.ErrorIs(t, err, store.ErrInvalid, "a showing has a time")
	assert.Len(t, fixture.Chain(t, s), 2, "showing writes no row: the park and the approval only")
}

// testVoteRefusals checks every refusal of Vote: each wraps its sentinel
// and leaves every ticket and the chain as they were.
func testVoteRefusals(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	at := fixture.Now(t, s)
	park := func(n int, created time.Time) string {
		p, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", n, created), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		return p.ID
	}
	pending := park(1, at)
	_, err := s.Vote(ctx, pending, fixture.Vote("alice", at), 3, "three", fixture.Note("vote"))
	require.NoError(t, err)
	denied := park(2, at)
	_, err = s.Resolve(ctx, denied, store.Resolution{To: store.Denied, At: at}, fixture.Note("deny"))
	require.NoError(t, err)
	approved := fixture.ParkApproved(t, s, 3).ID
	voted := park(4, at)
	for _, who := range []string{"alice", "bob"} {
		_, err = s.Vote(ctx, voted, fixture.Vote(who, at), 2, "two", fixture.Note("vote"))
		require.NoError(t, err)
	}
	executing := fixture.ParkExecuting(t, s, 6, "gate-1", at.Add(fixture.Lease)).ID
	// Parked last, expiring now, so that its expiry is within the skew
	// bound when the first cases run.
	expires := fixture.Now(t, s)
	expiring := park(5, expires.Add(-fixture.TTL))
	ids := []string{pending, denied, approved, voted, expiring, executing}

	big := strings.Repeat("x", store.MaxFieldSize+1)
	cases := []struct {
		name   string
		id     string
		v      func(now time.Time) store.Vote
		quorum int
		reason string
		want   error
	}{
		{"at expiry", expiring, func(time.Time) store.Vote { return fixture.Vote("bob", expires) }, 3, "", store.ErrExpired},
		{"after expiry", expiring, func(n time.Time) store.Vote { return fixture.Vote("bob", n.Add(time.Second)) }, 3, "", store.ErrExpired},
		{"unknown ticket", "no-such-ticket", func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 3, "", store.ErrNotFound},
		{"denied", denied, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 3, "", store.ErrResolved},
		{"approved", approved, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 3, "", store.ErrResolved},
		{"approved by votes", voted, func(n time.Time) store.Vote { return fixture.Vote("carol", n) }, 3, "", store.ErrResolved},
		{"executing", executing, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 3, "", store.ErrResolved},
		{"duplicate", pending, func(n time.Time) store.Vote { return fixture.Vote("alice", n) }, 3, "", store.ErrDuplicate},
		{"clock ahead", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n.Add(store.MaxSkew+time.Second)) }, 3, "", store.ErrClockSkew},
		{"clock behind", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n.Add(-store.MaxSkew-time.Second)) }, 3, "", store.ErrClockSkew},
		{"a day behind", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n.Add(-24*time.Hour)) }, 3, "", store.ErrClockSkew},
		{"quorum of one", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 1, "", store.ErrInvalid},
		{"quorum of none", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 0, "", store.ErrInvalid},
		{"quorum over the bound", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, store.MaxQuorum + 1, "", store.ErrInvalid},
		{"no approver", pending, func(n time.Time) store.Vote { return fixture.Vote("", n) }, 3, "", store.ErrInvalid},
		{"no time", pending, func(time.Time) store.Vote { return fixture.Vote("bob", time.Time{}) }, 3, "", store.ErrInvalid},
		{"approver not UTF-8", pending, func(n time.Time) store.Vote { return fixture.Vote("b\xffb", n) }, 3, "", store.ErrInvalid},
		{"reason not UTF-8", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 3, "\xc3", store.ErrInvalid},
		{"oversized approver", pending, func(n time.Time) store.Vote { return fixture.Vote(big[:store.MaxKeySize+1], n) }, 3, "", store.ErrTooLarge},
		{"oversized evidence", pending, func(n time.Time) store.Vote {
			return store.Vote{Approver: "bob", Evidence: []byte(big), At: n}
		}, 3, "", store.ErrTooLarge},
		{"oversized reason", pending, func(n time.Time) store.Vote { return fixture.Vote("bob", n) }, 3, big, store.ErrTooLarge},
	}
	snapshot := func() []store.Approval {
		var out []store.Approval
		for _, id := range ids {
			a, err := s.Get(ctx, id)
			require.NoError(t, err)
			out = append(out, fixture.Normalize(a))
		}
		return out
	}
	before, head := snapshot(), fixture.Last(t, s)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Vote(ctx, c.id, c.v(fixture.Now(t, s)), c.quorum, c.reason, fixture.Note("vote"))
			require.ErrorIs(t, err, c.want)
			assert.NotContains(t, err.Error(), "sig", "the error quotes no evidence")
			assert.Equal(t, before, snapshot(), "a refused vote changes no ticket")
			assert.Equal(t, head, fixture.Last(t, s), "a refused vote writes no row")
		})
	}
	e, err := s.Get(ctx, expiring)
	require.NoError(t, err)
	assert.Equal(t, store.Pending, e.State, "a vote too late leaves the ticket to the sweeper")
	fixture.Chain(t, s)
}

// testVotesTravel checks that ShownAt and Votes come back from every
// method that returns a ticket: a merge, List, ExpirePending, and the
// execution of a ticket approved by votes.
func testVotesTravel(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	at := fixture.Now(t, s)
	in := fixture.TicketAt("s1", "u1", 1, at.Add(-fixture.TTL+time.Minute)) // a minute to live
	p, _, err := s.Park(ctx, in, store.Caps{}, nil)
	require.NoError(t, err)
	_, err = s.Show(ctx, p.ID, at)
	require.NoError(t, err)
	one, err := s.Vote(ctx, p.ID, fixture.Vote("alice", at), 2, "two", nil)
	require.NoError(t, err)
	assert.True(t, one.ShownAt.IsZero(), "a vote that leaves the ticket pending clears ShownAt")
	again, err := s.Get(ctx, p.ID)
	require.NoError(t, err)
	assert.True(t, again.ShownAt.IsZero(), "as stored")
	_, err = s.Show(ctx, p.ID, at) // shown to the next approver
	require.NoError(t, err)
	check := func(what string, got store.Approval) {
		t.Helper()
		assert.True(t, at.Equal(got.ShownAt), "%s returns ShownAt", what)
		assert.Equal(t, fixture.Normalize(one).Votes, fixture.Normalize(got).Votes, "%s returns Votes", what)
	}
	m, merged, err := s.Park(ctx, in, store.Caps{}, nil)
	require.NoError(t, err)
	require.True(t, merged)
	check("a merging Park", m)
	page, _, err := s.List(ctx, store.Filter{States: []store.State{store.Pending}})
	require.NoError(t, err)
	require.Len(t, page, 1)
	check("List", page[0])
	expired, err := s.ExpirePending(ctx, in.ExpiresAt, nil)
	require.NoError(t, err)
	require.Len(t, expired, 1)
	check("ExpirePending", expired[0])
	_, err = s.Vote(ctx, p.ID, fixture.Vote("bob", at), 2, "two", nil)
	assert.ErrorIs(t, err, store.ErrResolved, "an expired ticket takes no vote")

	q, _, err := s.Park(ctx, fixture.TicketAt("s2", "u1", 2, at), store.Caps{}, nil)
	require.NoError(t, err)
	_, err = s.Show(ctx, q.ID, at)
	require.NoError(t, err)
	_, err = s.Vote(ctx, q.ID, fixture.Vote("alice", at), 2, "two", nil)
	require.NoError(t, err)
	_, err = s.Show(ctx, q.ID, at) // shown to bob
	require.NoError(t, err)
	one, err = s.Vote(ctx, q.ID, fixture.Vote("bob", at), 2, "two", nil)
	require.NoError(t, err)
	require.Equal(t, store.Approved, one.State)
	assert.True(t, at.Equal(one.ShownAt), "the vote that approves keeps ShownAt")
	// A lease that ends a millisecond after the consume lapses without
	// waiting: the reclaim claims a time after it.
	consumed := fixture.Now(t, s)
	leaseEnd := consumed.Add(time.Millisecond)
	c, err := s.Consume(ctx, q.ID, store.Claim{Key: "k", Owner: "gate-1", At: consumed, LeaseUntil: leaseEnd}, nil)
	require.NoError(t, err)
	check("Consume", c)
	lapsed, err := s.Expired(ctx, leaseEnd, 0)
	require.NoError(t, err)
	require.Len(t, lapsed, 1)
	check("Expired", lapsed[0])
	r, err := s.Reclaim(ctx, q.ID, 1, fixture.Claim("", "gate-2", leaseEnd), nil)
	require.NoError(t, err)
	check("Reclaim", r)
	f, err := s.Finish(ctx, q.ID, 2, fixture.Done(leaseEnd), nil)
	require.NoError(t, err)
	check("Finish", f)
	read, err := s.Get(ctx, q.ID)
	require.NoError(t, err)
	check("Get", read)
}

// testVotesConcurrent races n goroutines voting on one ticket, as distinct
// approvers and as the same ones repeatedly, and, apart, votes against a
// denial: votes are serialized, so two people voting at once both count,
// one person voting twice counts once, and a ticket is approved once.
func testVotesConcurrent(t *testing.T, newStore func(*testing.T) store.Store, n int) {
	// tallied checks the stored votes against the accepted calls: the
	// accepted approvers, each once, and one row per accepted vote.
	tallied := func(t *testing.T, s store.Store, id string, accepted map[string]int) store.Approval {
		t.Helper()
		got, err := s.Get(t.Context(), id)
		require.NoError(t, err)
		seen := map[string]int{}
		for _, v := range got.Votes {
			seen[v.Approver]++
		}
		for who, k := range seen {
			assert.Equal(t, 1, k, "%s is recorded once", who)
		}
		assert.Equal(t, accepted, seen, "every accepted vote is stored and every stored vote was accepted")
		rows := 0
		for _, r := range fixture.Chain(t, s) {
			if r.TicketID == id && r.Decision == "vote" {
				rows++
			}
		}
		assert.Equal(t, len(got.Votes), rows, "one row per accepted vote")
		return got
	}
	votes := func(t *testing.T, s store.Store, id string, approvers, quorum int) ([]error, map[string]int) {
		at := fixture.Now(t, s)
		accepted := map[string]int{}
		errs := fixture.Race(n, func(i int) error {
			_, err := s.Vote(t.Context(), id, fixture.Vote(fmt.Sprintf("approver-%d", i%approvers), at), quorum, "quorum", fixture.Note("vote"))
			return err
		})
		for i, err := range errs {
			if err == nil {
				accepted[fmt.Sprintf("approver-%d", i%approvers)]++
			}
		}
		return errs, accepted
	}
	t.Run("ReachQuorum", func(t *testing.T) {
		approvers := max(2, min(8, n))
		quorum := min(5, approvers)
		s := newStore(t)
		p, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, fixture.Now(t, s)), store.Caps{}, nil)
		require.NoError(t, err)
		errs, accepted := votes(t, s, p.ID, approvers, quorum)
		ok, _, other := fixture.Tally(errs, nil)
		for _, err := range other {
			if !errors.Is(err, store.ErrDuplicate) && !errors.Is(err, store.ErrResolved) {
				t.Errorf("unexpected: %v", err)
			}
		}
		assert.Equal(t, quorum, ok, "exactly the quorum of votes is accepted")
		got := tallied(t, s, p.ID, accepted)
		assert.Equal(t, store.Approved, got.State)
		require.Len(t, got.Votes, quorum)
		assert.Equal(t, got.Votes[quorum-1].Approver, got.Approver, "approved by the vote that reached the quorum")
		approvals := 0
		for _, r := range fixture.Chain(t, s) {
			if r.Reason == string(store.Approved) {
				approvals++
			}
		}
		assert.Equal(t, 1, approvals, "approved exactly once")
	})
	t.Run("ShortOfQuorum", func(t *testing.T) {
		approvers := max(2, min(3, n/2))
		s := newStore(t)
		p, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, fixture.Now(t, s)), store.Caps{}, nil)
		require.NoError(t, err)
		errs, accepted := votes(t, s, p.ID, approvers, approvers+1)
		ok, refused, other := fixture.Tally(errs, store.ErrDuplicate)
		assert.Empty(t, other)
		assert.Equal(t, approvers, ok, "every approver voting at once counts")
		assert.Equal(t, n-approvers, refused, "and each counts once")
		got := tallied(t, s, p.ID, accepted)
		assert.Equal(t, store.Pending, got.State, "short of the quorum")
		assert.Empty(t, got.Approver)
	})
	t.Run("VoteOrDeny", func(t *testing.T) {
		s := newStore(t)
		at := fixture.Now(t, s)
		p, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, nil)
		require.NoError(t, err)
		accepted := map[string]int{}
		errs := fixture.Race(n, func(i int) error {
			if i%4 == 0 {
				_, err := s.Resolve(t.Context(), p.ID, store.Resolution{To: store.Denied, Approver: "u1", At: at}, fixture.Note("deny"))
				return err
			}
			_, err := s.Vote(t.Context(), p.ID, fixture.Vote(fmt.Sprintf("approver-%d", i), at), 3, "quorum", fixture.Note("vote"))
			return err
		})
		denials := 0
		for i, err := range errs {
			switch {
			case err == nil && i%4 == 0:
				denials++
			case err == nil:
				accepted[fmt.Sprintf("approver-%d", i)]++
			case !errors.Is(err, store.ErrResolved):
				t.Errorf("unexpected: %v", err)
			}
		}
		got := tallied(t, s, p.ID, accepted)
		switch got.State {
		case store.Approved:
			assert.Zero(t, denials, "an approved ticket was never denied")
			assert.Len(t, got.Votes, 3)
		case store.Denied:
			assert.Equal(t, 1, denials, "denied once")
			assert.Less(t, len(got.Votes), 3, "a denied ticket never reached its quorum")
		default:
			t.Errorf("the ticket ended %s", got.State)
		}
	})
}
