package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

func testGrants(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	g := store.Grant{ID: "g1", User: "alice", Spec: []byte(`{"kind":"exact"}`), Remaining: 2,
		CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	require.NoError(t, s.PutGrant(ctx, g))
	got, err := s.GetGrant(ctx, "g1")
	require.NoError(t, err)
	got.CreatedAt, got.ExpiresAt = got.CreatedAt.UTC(), got.ExpiresAt.UTC()
	assert.Equal(t, g, got)
	assert.ErrorIs(t, s.PutGrant(ctx, store.Grant{ID: "g1", User: "mallory", Spec: []byte(`{}`), Remaining: 99,
		ExpiresAt: t0.Add(time.Hour)}), store.ErrDuplicate)

	for want := 1; want >= 0; want-- {
		used, err := s.UseGrant(ctx, "g1", t0.Add(time.Minute))
		require.NoError(t, err)
		assert.Equal(t, want, used.Remaining)
	}
	_, err = s.UseGrant(ctx, "g1", t0.Add(time.Minute))
	assert.ErrorIs(t, err, store.ErrGrantUsedUp)
	got, err = s.GetGrant(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, 0, got.Remaining, "a refused use does not go below zero")

	require.NoError(t, s.PutGrant(ctx, store.Grant{ID: "g2", User: "alice", Spec: []byte(`{}`), Remaining: 5,
		ExpiresAt: t0.Add(time.Hour)}))
	_, err = s.UseGrant(ctx, "g2", t0.Add(time.Hour))
	assert.ErrorIs(t, err, store.ErrExpired)
	got, err = s.GetGrant(ctx, "g2")
	require.NoError(t, err)
	assert.Equal(t, 5, got.Remaining, "an expired use takes nothing")
	require.NoError(t, s.PutGrant(ctx, store.Grant{ID: "g3", User: "alice", Spec: []byte(`{}`), Remaining: 0,
		ExpiresAt: t0}))
	_, err = s.UseGrant(ctx, "g3", t0)
	assert.ErrorIs(t, err, store.ErrExpired, "expiry is checked before remaining uses")

	_, err = s.UseGrant(ctx, "nope", t0)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.GetGrant(ctx, "nope")
	assert.ErrorIs(t, err, store.ErrNotFound)
	for name, bad := range map[string]store.Grant{
		"no id":          {User: "a", Spec: []byte(`{}`), ExpiresAt: t0},
		"negative":       {ID: "b1", User: "a", Spec: []byte(`{}`), Remaining: -1, ExpiresAt: t0},
		"spec not json":  {ID: "b2", User: "a", Spec: []byte(`{`), ExpiresAt: t0},
		"oversized spec": {ID: "b3", User: "a", Spec: make([]byte, store.MaxFieldSize+1), ExpiresAt: t0},
	} {
		err := s.PutGrant(ctx, bad)
		assert.Error(t, err, name)
		if bad.ID != "" {
			_, err = s.GetGrant(ctx, bad.ID)
			assert.ErrorIs(t, err, store.ErrNotFound, name)
		}
	}
}
