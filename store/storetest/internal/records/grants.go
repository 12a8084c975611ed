package records

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Grants checks [store.Grants]: a grant reads back as stored, malformed
// ones are refused, and each use takes one of its remaining uses until
// none is left or it expired.
func Grants(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	at := fixture.Now(t, s)
	g := store.Grant{ID: "g1", User: "alice", Spec: []byte(`{"kind":"exact"}`), Remaining: 2,
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	require.NoError(t, s.PutGrant(ctx, g))
	got, err := s.GetGrant(ctx, "g1")
	require.NoError(t, err)
	got.CreatedAt, got.ExpiresAt = got.CreatedAt.UTC(), got.ExpiresAt.UTC()
	assert.Equal(t, g, got)
	assert.ErrorIs(t, s.PutGrant(ctx, store.Grant{ID: "g1", User: "mallory", Spec: []byte(`{}`), Remaining: 99,
		ExpiresAt: at.Add(time.Hour)}), store.ErrDuplicate)

	for want := 1; want >= 0; want-- {
		used, err := s.UseGrant(ctx, "g1", at)
		require.NoError(t, err)
		assert.Equal(t, want, used.Remaining)
	}
	_, err = s.UseGrant(ctx, "g1", at)
	assert.ErrorIs(t, err, store.ErrGrantUsedUp)
	got, err = s.GetGrant(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, 0, got.Remaining, "a refused use does not go below zero")

	require.NoError(t, s.PutGrant(ctx, store.Grant{ID: "g2", User: "alice", Spec: []byte(`{}`), Remaining: 5,
		ExpiresAt: at}))
	_, err = s.UseGrant(ctx, "g2", at)
	assert.ErrorIs(t, err, store.ErrExpired)
	got, err = s.GetGrant(ctx, "g2")
	require.NoError(t, err)
	assert.Equal(t, 5, got.Remaining, "an expired use takes nothing")
	require.NoError(t, s.PutGrant(ctx, store.Grant{ID: "g3", User: "alice", Spec: []byte(`{}`), Remaining: 0,
		ExpiresAt: at}))
	_, err = s.UseGrant(ctx, "g3", at)
	assert.ErrorIs(t, err, store.ErrExpired, "expiry is checked before remaining uses")

	_, err = s.UseGrant(ctx, "nope", at)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.UseGrant(ctx, "g1", time.Time{})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.GetGrant(ctx, "nope")
	assert.ErrorIs(t, err, store.ErrNotFound)
	for name, bad := range map[string]store.Grant{
		"no id":          {User: "a", Spec: []byte(`{}`), ExpiresAt: fixture.T0},
		"negative":       {ID: "b1", User: "a", Spec: []byte(`{}`), Remaining: -1, ExpiresAt: fixture.T0},
		"spec not json":  {ID: "b2", User: "a", Spec: []byte(`{`), ExpiresAt: fixture.T0},
		"oversized spec": {ID: "b3", User: "a", Spec: make([]byte, store.MaxFieldSize+1), ExpiresAt: fixture.T0},
		"revoked":        {ID: "b4", User: "a", Spec: []byte(`{}`), ExpiresAt: fixture.T0, RevokedAt: fixture.T0},
	} {
		err := s.PutGrant(ctx, bad)
		assert.Error(t, err, name)
		if bad.ID != "" {
			_, err = s.GetGrant(ctx, bad.ID)
			assert.ErrorIs(t, err, store.ErrNotFound, name)
		}
	}
}

// RevokeGrant checks that a revoked grant is never used again and that
// its revocation has its row.
func RevokeGrant(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	at := fixture.Now(t, s)
	g := fixture.Grant("g1")
	g.CreatedAt, g.ExpiresAt = at, at.Add(fixture.TTL)
	require.NoError(t, s.PutGrant(ctx, g))
	require.NoError(t, s.RevokeGrant(ctx, "g1", at, fixture.Note("revoke grant")))
	assert.Equal(t, "revoke grant", fixture.Last(t, s).Decision)
	got, err := s.GetGrant(ctx, "g1")
	require.NoError(t, err, "a revoked grant stays readable")
	assert.True(t, at.Equal(got.RevokedAt))
	assert.Equal(t, g.Remaining, got.Remaining)
	_, err = s.UseGrant(ctx, "g1", at)
	assert.ErrorIs(t, err, store.ErrRevoked, "a revoked grant is never used")
	a := fixture.TicketAt("s1", "u1", 1, at)
	a.State, a.Approver = store.Approved, "grant:g1"
	_, _, err = s.ParkGranted(ctx, a, "g1", nil)
	assert.ErrorIs(t, err, store.ErrRevoked)
	assert.ErrorIs(t, s.RevokeGrant(ctx, "g1", at, fixture.Note("again")), store.ErrRevoked)
	assert.ErrorIs(t, s.RevokeGrant(ctx, "nope", at, nil), store.ErrNotFound)
	assert.ErrorIs(t, s.RevokeGrant(ctx, "g1", time.Time{}, nil), store.ErrInvalid)
	assert.Len(t, fixture.Chain(t, s), 1, "one row for one revocation")
}

// ParkGranted checks that a grant's use and the approved ticket it
// pays for are stored together or not at all.
func ParkGranted(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	setup := func(t *testing.T, remaining int, expires time.Duration) (store.Store, time.Time) {
		s := newStore(t)
		at := fixture.Now(t, s)
		g := fixture.Grant("g1")
		g.Remaining, g.CreatedAt, g.ExpiresAt = remaining, at.Add(-time.Hour), at.Add(expires)
		require.NoError(t, s.PutGrant(ctx, g))
		return s, at
	}
	granted := func(n int, at time.Time) store.Approval {
		a := fixture.TicketAt("s1", "u1", n, at)
		a.State, a.Approver, a.Evidence = store.Approved, "grant:g1", []byte(`{"mac":"m"}`)
		return a
	}
	t.Run("Uses", func(t *testing.T) {
		s, at := setup(t, 2, time.Hour)
		for want := 1; want >= 0; want-- {
			a, g, err := s.ParkGranted(ctx, granted(want, at), "g1", fixture.Note("grant"))
			require.NoError(t, err)
			assert.Equal(t, want, g.Remaining)
			assert.Equal(t, store.Approved, a.State)
			assert.Equal(t, "grant:g1", a.Approver)
			fixture.AssertNoted(t, s, a.ID, "grant", store.Approved)
			read, err := s.Get(ctx, a.ID)
			require.NoError(t, err)
			assert.Equal(t, fixture.Normalize(a), fixture.Normalize(read))
		}
	})
	refusals := []struct {
		name      string
		remaining int
		expires   time.Duration
		grantID   string
		mutate    func(*store.Approval)
		want      error
	}{
		{"used up", 0, time.Hour, "g1", nil, store.ErrGrantUsedUp},
		{"expired", 3, 0, "g1", nil, store.ErrExpired},
		{"unknown grant", 3, time.Hour, "nope", nil, store.ErrNotFound},
		{"pending ticket", 3, time.Hour, "g1", func(a *store.Approval) { a.State, a.Approver = store.Pending, "" }, store.ErrInvalid},
		{"no approver", 3, time.Hour, "g1", func(a *store.Approval) { a.Approver = "" }, store.ErrInvalid},
		{"oversized rationale", 3, time.Hour, "g1", func(a *store.Approval) { a.Rationale = string(make([]byte, store.MaxFieldSize+1)) }, store.ErrTooLarge},
		{"taken id", 3, time.Hour, "g1", func(a *store.Approval) { a.ID = "taken" }, store.ErrDuplicate},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			s, at := setup(t, c.remaining, c.expires)
			taken := fixture.TicketAt("s9", "u9", 9, at)
			taken.ID = "taken"
			_, _, err := s.Park(ctx, taken, store.Caps{}, nil)
			require.NoError(t, err)
			a := granted(1, at)
			if c.mutate != nil {
				c.mutate(&a)
			}
			_, _, err = s.ParkGranted(ctx, a, c.grantID, fixture.Note("grant"))
			assert.ErrorIs(t, err, c.want)
			g, err := s.GetGrant(ctx, "g1")
			require.NoError(t, err)
			assert.Equal(t, c.remaining, g.Remaining, "a refused park takes no use")
			page, _, err := s.List(ctx, store.Filter{})
			require.NoError(t, err)
			assert.Len(t, page, 1, "a refused use stores no ticket")
			assert.Empty(t, fixture.Chain(t, s), "and no row")
		})
	}
}
