package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// note returns a Note recording decision on the ticket it is given: the
// record carries the ticket's id, state (as Reason), approver and key, so
// a test can see that the store called it with the ticket as stored.
func note(decision string) store.Note {
	return func(a store.Approval, merged bool) receipt.AuditRecord {
		r := receipt.AuditRecord{
			TicketID:       a.ID,
			Task:           a.Task,
			Step:           a.Step,
			Session:        a.Session,
			Tool:           a.Tool,
			EffectClass:    a.EffectClass,
			ArgsDigest:     a.Digest,
			Principal:      a.Requester,
			PolicyVersion:  a.PolicyVersion,
			Decision:       decision,
			Reason:         string(a.State),
			Taint:          a.Taint,
			Approver:       a.Approver,
			IdempotencyKey: a.IdempotencyKey,
			Time:           1, // ignored: the store stamps the time
		}
		if merged {
			r.Result = "merged"
		}
		return r
	}
}

// badNote makes a record the chain refuses (its Reason is not UTF-8), so
// the method it is given to must fail and write nothing.
func badNote(store.Approval, bool) receipt.AuditRecord {
	return receipt.AuditRecord{Decision: "refused", Reason: "not \xff UTF-8"}
}

// chain reads the whole audit chain of s and checks that it verifies from
// the start and that its times never decrease.
func chain(t testing.TB, s store.Store) []receipt.AuditRecord {
	t.Helper()
	all, err := s.AuditSeq(t.Context(), 1, 1<<62)
	require.NoError(t, err)
	require.NoError(t, receipt.VerifyChain(all, canon.Digest{}), "the chain verifies from the start")
	for i := 1; i < len(all); i++ {
		require.GreaterOrEqual(t, all[i].Time, all[i-1].Time, "times never decrease along the chain")
	}
	return all
}

// last returns the newest record of s's chain.
func last(t testing.TB, s store.Store) receipt.AuditRecord {
	t.Helper()
	h, err := s.AuditHead(t.Context())
	require.NoError(t, err)
	return h
}

// assertNoted checks that the newest record is decision on ticket id in
// state.
func assertNoted(t testing.TB, s store.Store, id, decision string, state store.State) {
	t.Helper()
	h := last(t, s)
	assert.Equal(t, id, h.TicketID, "the row names the ticket")
	assert.Equal(t, decision, h.Decision)
	assert.Equal(t, string(state), h.Reason, "the note saw the ticket as stored")
}

// testNotes checks, for every method that takes a note, that a note the
// chain refuses fails the method and leaves both the state and the chain
// as they were, and that a nil note writes no row.
func testNotes(t *testing.T, newStore func(*testing.T) store.Store) {
	type subject struct {
		s     store.Store
		at    time.Time
		ids   map[string]string // role -> ticket id
		state func() any        // what must not change
	}
	setup := func(t *testing.T) subject {
		s := newStore(t)
		at := now(t, s)
		ids := map[string]string{}
		p, _, err := s.Park(t.Context(), TicketAt("s1", "u1", 1, at), store.Caps{}, note("park"))
		require.NoError(t, err)
		ids["pending"] = p.ID
		ids["approved"] = parkApproved(t, s, 2).ID
		ids["executing"] = parkExecuting(t, s, 3, "gate-1", at.Add(time.Minute)).ID
		ids["lapsed"] = parkExecuting(t, s, 4, "gate-1", at.Add(-time.Second)).ID
		require.NoError(t, s.PutCredential(t.Context(), credential("cred-1", "u1", 1)))
		require.NoError(t, s.CreateInvite(t.Context(), invite(1)))
		g := grant("g1")
		g.CreatedAt, g.ExpiresAt = at, at.Add(ttl)
		require.NoError(t, s.PutGrant(t.Context(), g))
		sub := subject{s: s, at: at, ids: ids}
		sub.state = func() any {
			var snap []any
			for _, role := range []string{"pending", "approved", "executing", "lapsed"} {
				a, err := s.Get(t.Context(), ids[role])
				require.NoError(t, err)
				snap = append(snap, normalize(a))
			}
			page, _, err := s.List(t.Context(), store.Filter{})
			require.NoError(t, err)
			c, err := s.GetCredential(t.Context(), []byte("cred-1"))
			require.NoError(t, err)
			inv, err := s.GetInvite(t.Context(), invite(1).TokenHash)
			require.NoError(t, err)
			g, err := s.GetGrant(t.Context(), "g1")
			require.NoError(t, err)
			return append(snap, len(page), c.RevokedAt.IsZero(), inv.RevokedAt.IsZero(), g.Remaining,
				g.RevokedAt.IsZero(), last(t, s).Seq)
		}
		return sub
	}
	methods := []struct {
		name string
		call func(t *testing.T, sub subject, n store.Note) error
	}{
		{"Park", func(t *testing.T, sub subject, n store.Note) error {
			_, _, err := sub.s.Park(t.Context(), TicketAt("s2", "u2", 10, sub.at), store.Caps{}, n)
			return err
		}},
		{"Park/merge", func(t *testing.T, sub subject, n store.Note) error {
			_, merged, err := sub.s.Park(t.Context(), TicketAt("s1", "u1", 1, sub.at), store.Caps{}, n)
			if err == nil && !merged {
				t.Error("expected a merge")
			}
			return err
		}},
		{"Park/approved", func(t *testing.T, sub subject, n store.Note) error {
			a := TicketAt("s2", "u2", 11, sub.at)
			a.State, a.Approver = store.Approved, "policy"
			_, _, err := sub.s.Park(t.Context(), a, store.Caps{}, n)
			return err
		}},
		{"Resolve/approve", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Resolve(t.Context(), sub.ids["pending"], approve(sub.at), n)
			return err
		}},
		{"Resolve/deny", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Resolve(t.Context(), sub.ids["pending"], store.Resolution{To: store.Denied, At: sub.at}, n)
			return err
		}},
		{"Resolve/revoke", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Resolve(t.Context(), sub.ids["approved"], store.Resolution{To: store.Revoked, At: sub.at}, n)
			return err
		}},
		{"Vote", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Vote(t.Context(), sub.ids["pending"], vote("bob", sub.at), 2, "two", n)
			return err
		}},
		{"ExpirePending", func(t *testing.T, sub subject, n store.Note) error {
			got, err := sub.s.ExpirePending(t.Context(), sub.at.Add(ttl), n)
			if err == nil && len(got) != 1 {
				t.Errorf("expired %d tickets, want 1", len(got))
			}
			return err
		}},
		{"Consume", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Consume(t.Context(), sub.ids["approved"], claim("k", "gate-2", sub.at), n)
			return err
		}},
		{"Finish", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Finish(t.Context(), sub.ids["executing"], 1, done(sub.at), n)
			return err
		}},
		{"Reclaim", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Reclaim(t.Context(), sub.ids["lapsed"], 1, claim("", "gate-2", sub.at), n)
			return err
		}},
		{"RevokeCredential", func(t *testing.T, sub subject, n store.Note) error {
			return sub.s.RevokeCredential(t.Context(), []byte("cred-1"), sub.at, n)
		}},
		{"RevokeInvite", func(t *testing.T, sub subject, n store.Note) error {
			return sub.s.RevokeInvite(t.Context(), invite(1).TokenHash, sub.at, n)
		}},
		{"RevokeGrant", func(t *testing.T, sub subject, n store.Note) error {
			return sub.s.RevokeGrant(t.Context(), "g1", sub.at, n)
		}},
		{"ParkGranted", func(t *testing.T, sub subject, n store.Note) error {
			a := TicketAt("s2", "u2", 12, sub.at)
			a.State, a.Approver = store.Approved, "grant:g1"
			_, _, err := sub.s.ParkGranted(t.Context(), a, "g1", n)
			return err
		}},
	}
	for _, m := range methods {
		t.Run(m.name, func(t *testing.T) {
			t.Run("Refused", func(t *testing.T) {
				sub := setup(t)
				before := sub.state()
				err := m.call(t, sub, badNote)
				require.ErrorIs(t, err, store.ErrInvalid, "a record the chain refuses fails the method")
				assert.Equal(t, before, sub.state(), "the decision and its row appear together or not at all")
				chain(t, sub.s)
				require.NoError(t, m.call(t, sub, note("retry")), "the refused call left nothing behind")
			})
			t.Run("Noted", func(t *testing.T) {
				sub := setup(t)
				head := last(t, sub.s)
				require.NoError(t, m.call(t, sub, note("noted")))
				after := last(t, sub.s)
				assert.Equal(t, head.Seq+1, after.Seq, "one row per decision")
				assert.Equal(t, "noted", after.Decision)
				chain(t, sub.s)
			})
			t.Run("Nil", func(t *testing.T) {
				sub := setup(t)
				head := last(t, sub.s)
				require.NoError(t, m.call(t, sub, nil))
				assert.Equal(t, head, last(t, sub.s), "a nil note writes no row")
			})
		})
	}
}

// testClock checks the store's clock and that every deciding method
// refuses a time off it by more than store.MaxSkew, in either direction,
// and accepts one within it.
func testClock(t *testing.T, newStore func(*testing.T) store.Store) {
	t.Run("Now", func(t *testing.T) {
		s := newStore(t)
		a := now(t, s)
		b := now(t, s)
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
			at := now(t, s)
			p, _, err := s.Park(t.Context(), TicketAt("s1", "u1", 1, at.Add(-time.Minute)), store.Caps{}, nil)
			require.NoError(t, err)
			_, err = s.Resolve(t.Context(), p.ID, approve(at.Add(d)), nil)
			return err
		}},
		{"Vote", func(t *testing.T, s store.Store, d time.Duration) error {
			at := now(t, s)
			p, _, err := s.Park(t.Context(), TicketAt("s1", "u1", 1, at.Add(-time.Minute)), store.Caps{}, nil)
			require.NoError(t, err)
			_, err = s.Vote(t.Context(), p.ID, vote("bob", at.Add(d)), 2, "two", nil)
			return err
		}},
		{"Consume", func(t *testing.T, s store.Store, d time.Duration) error {
			a := parkApproved(t, s, 1)
			_, err := s.Consume(t.Context(), a.ID, claim("k", "gate-1", now(t, s).Add(d)), nil)
			return err
		}},
		{"Reclaim", func(t *testing.T, s store.Store, d time.Duration) error {
			at := now(t, s)
			a := parkExecuting(t, s, 1, "gate-1", at.Add(-time.Second))
			// A lease that ended a day ago by the caller's clock, so only
			// the skew check can refuse.
			_, err := s.Reclaim(t.Context(), a.ID, 1, store.Claim{Owner: "gate-2", At: at.Add(d),
				LeaseUntil: at.Add(d).Add(lease)}, nil)
			return err
		}},
		{"UseGrant", func(t *testing.T, s store.Store, d time.Duration) error {
			at := now(t, s)
			g := grant("g1")
			g.CreatedAt, g.ExpiresAt = at.Add(-48*time.Hour), at.Add(48*time.Hour)
			require.NoError(t, s.PutGrant(t.Context(), g))
			_, err := s.UseGrant(t.Context(), "g1", at.Add(d))
			return err
		}},
		{"ParkGranted", func(t *testing.T, s store.Store, d time.Duration) error {
			at := now(t, s)
			g := grant("g1")
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
