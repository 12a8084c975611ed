package records

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// GetInvite checks that GetInvite reports an invite as stored, shows a
// redemption, and never redeems: an early check built on it must leave the
// invite for RedeemInvite to decide.
func GetInvite(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)

	_, err := s.GetInvite(ctx, [32]byte{7})
	assert.ErrorIs(t, err, store.ErrNotFound, "an unknown hash")

	inv := store.Invite{TokenHash: [32]byte{7}, User: "alice", CreatedAt: fixture.T0, ExpiresAt: fixture.T0.Add(time.Hour)}
	require.NoError(t, s.CreateInvite(ctx, inv))
	other := store.Invite{TokenHash: [32]byte{8}, User: "bob", CreatedAt: fixture.T0, ExpiresAt: fixture.T0.Add(2 * time.Hour)}
	require.NoError(t, s.CreateInvite(ctx, other))

	for range 2 {
		got, err := s.GetInvite(ctx, inv.TokenHash)
		require.NoError(t, err)
		assert.Equal(t, inv.TokenHash, got.TokenHash)
		assert.Equal(t, "alice", got.User, "the invite asked for, not another")
		assert.True(t, fixture.T0.Equal(got.CreatedAt), "CreatedAt %v", got.CreatedAt)
		assert.True(t, inv.ExpiresAt.Equal(got.ExpiresAt), "ExpiresAt %v", got.ExpiresAt)
		assert.True(t, got.RedeemedAt.IsZero(), "GetInvite does not redeem")
	}

	at := fixture.T0.Add(time.Minute)
	redeemed, err := s.RedeemInvite(ctx, inv.TokenHash, at)
	require.NoError(t, err, "an invite only looked up is still redeemable")
	assert.Equal(t, "alice", redeemed.User)

	got, err := s.GetInvite(ctx, inv.TokenHash)
	require.NoError(t, err, "a redeemed invite is still found")
	assert.True(t, at.Equal(got.RedeemedAt), "RedeemedAt %v", got.RedeemedAt)
	assert.Equal(t, "alice", got.User)

	got, err = s.GetInvite(ctx, other.TokenHash)
	require.NoError(t, err)
	assert.Equal(t, "bob", got.User)
	assert.True(t, got.RedeemedAt.IsZero(), "redeeming one invite leaves the others")

	_, err = s.RedeemInvite(ctx, other.TokenHash, other.ExpiresAt)
	assert.ErrorIs(t, err, store.ErrExpired)
	got, err = s.GetInvite(ctx, other.TokenHash)
	require.NoError(t, err)
	assert.True(t, got.RedeemedAt.IsZero(), "a refused redeem leaves the invite unredeemed")
}
