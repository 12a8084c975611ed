package audit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Notes checks, for every method that takes a note, that a note the
// chain refuses fails the method and leaves both the state and the chain
// as they were, and that a nil note writes no row.
func Notes(t *testing.T, newStore func(*testing.T) store.Store) {
	type subject struct {
		s     store.Store
		at    time.Time
		ids   map[string]string // role -> ticket id
		state func() any        // what must not change
	}
	setup := func(t *testing.T) subject {
		s := newStore(t)
		at := fixture.Now(t, s)
		ids := map[string]string{}
		p, _, err := s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		ids["pending"] = p.ID
		ids["approved"] = fixture.ParkApproved(t, s, 2).ID
		ids["executing"] = fixture.ParkExecuting(t, s, 3, "gate-1", at.Add(time.Minute)).ID
		ids["lapsed"] = fixture.ParkExecuting(t, s, 4, "gate-1", at.Add(-time.Second)).ID
		require.NoError(t, s.PutCredential(t.Context(), fixture.Credential("cred-1", "u1", 1)))
		require.NoError(t, s.CreateInvite(t.Context(), fixture.Invite(1)))
		g := fixture.Grant("g1")
		g.CreatedAt, g.ExpiresAt = at, at.Add(fixture.TTL)
		require.NoError(t, s.PutGrant(t.Context(), g))
		sub := subject{s: s, at: at, ids: ids}
		sub.state = func() any {
			var snap []any
			for _, role := range []string{"pending", "approved", "executing", "lapsed"} {
				a, err := s.Get(t.Context(), ids[role])
				require.NoError(t, err)
				snap = append(snap, fixture.Normalize(a))
			}
			page, _, err := s.List(t.Context(), store.Filter{})
			require.NoError(t, err)
			c, err := s.GetCredential(t.Context(), []byte("cred-1"))
			require.NoError(t, err)
			inv, err := s.GetInvite(t.Context(), fixture.Invite(1).TokenHash)
			require.NoError(t, err)
			g, err := s.GetGrant(t.Context(), "g1")
			require.NoError(t, err)
			return append(snap, len(page), c.RevokedAt.IsZero(), inv.RevokedAt.IsZero(), g.Remaining,
				g.RevokedAt.IsZero(), fixture.Last(t, s).Seq)
		}
		return sub
	}
	methods := []struct {
		name string
		call func(t *testing.T, sub subject, n store.Note) error
	}{
		{"Park", func(t *testing.T, sub subject, n store.Note) error {
			_, _, err := sub.s.Park(t.Context(), fixture.TicketAt("s2", "u2", 10, sub.at), store.Caps{}, n)
			return err
		}},
		{"Park/merge", func(t *testing.T, sub subject, n store.Note) error {
			_, merged, err := sub.s.Park(t.Context(), fixture.TicketAt("s1", "u1", 1, sub.at), store.Caps{}, n)
			if err == nil && !merged {
				t.Error("expected a merge")
			}
			return err
		}},
		{"Park/approved", func(t *testing.T, sub subject, n store.Note) error {
			a := fixture.TicketAt("s2", "u2", 11, sub.at)
			a.State, a.Approver = store.Approved, "policy"
			_, _, err := sub.s.Park(t.Context(), a, store.Caps{}, n)
			return err
		}},
		{"Resolve/approve", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Resolve(t.Context(), sub.ids["pending"], fixture.Approve(sub.at), n)
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
			_, err := sub.s.Vote(t.Context(), sub.ids["pending"], fixture.Vote("bob", sub.at), 2, "two", n)
			return err
		}},
		{"ExpirePending", func(t *testing.T, sub subject, n store.Note) error {
			got, err := sub.s.ExpirePending(t.Context(), sub.at.Add(fixture.TTL), n)
			if err == nil && len(got) != 1 {
				t.Errorf("expired %d tickets, want 1", len(got))
			}
			return err
		}},
		{"Consume", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Consume(t.Context(), sub.ids["approved"], fixture.Claim("k", "gate-2", sub.at), n)
			return err
		}},
		{"Finish", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Finish(t.Context(), sub.ids["executing"], 1, fixture.Done(sub.at), n)
			return err
		}},
		{"Reclaim", func(t *testing.T, sub subject, n store.Note) error {
			_, err := sub.s.Reclaim(t.Context(), sub.ids["lapsed"], 1, fixture.Claim("", "gate-2", sub.at), n)
			return err
		}},
		{"RevokeCredential", func(t *testing.T, sub subject, n store.Note) error {
			return sub.s.RevokeCredential(t.Context(), []byte("cred-1"), sub.at, n)
		}},
		{"RevokeInvite", func(t *testing.T, sub subject, n store.Note) error {
			return sub.s.RevokeInvite(t.Context(), fixture.Invite(1).TokenHash, sub.at, n)
		}},
		{"RevokeGrant", func(t *testing.T, sub subject, n store.Note) error {
			return sub.s.RevokeGrant(t.Context(), "g1", sub.at, n)
		}},
		{"ParkGranted", func(t *testing.T, sub subject, n store.Note) error {
			a := fixture.TicketAt("s2", "u2", 12, sub.at)
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
				err := m.call(t, sub, fixture.BadNote)
				require.ErrorIs(t, err, store.ErrInvalid, "a record the chain refuses fails the method")
				assert.Equal(t, before, sub.state(), "the decision and its row appear together or not at all")
				fixture.Chain(t, sub.s)
				require.NoError(t, m.call(t, sub, fixture.Note("retry")), "the refused call left nothing behind")
			})
			t.Run("Noted", func(t *testing.T) {
				sub := setup(t)
				head := fixture.Last(t, sub.s)
				require.NoError(t, m.call(t, sub, fixture.Note("noted")))
				after := fixture.Last(t, sub.s)
				assert.Equal(t, head.Seq+1, after.Seq, "one row per decision")
				assert.Equal(t, "noted", after.Decision)
				fixture.Chain(t, sub.s)
			})
			t.Run("Nil", func(t *testing.T) {
				sub := setup(t)
				head := fixture.Last(t, sub.s)
				require.NoError(t, m.call(t, sub, nil))
				assert.Equal(t, head, fixture.Last(t, sub.s), "a nil note writes no row")
			})
		})
	}
}
