package records

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// RevokeCredential checks that a revoked credential stays readable
// and never advances its counter again, so it never approves again.
func RevokeCredential(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	at := fixture.Now(t, s)
	require.NoError(t, s.PutCredential(ctx, fixture.Credential("cred-1", "alice", 3)))
	require.NoError(t, s.PutCredential(ctx, fixture.Credential("cred-2", "alice", 3)))
	require.NoError(t, s.RevokeCredential(ctx, []byte("cred-1"), at, fixture.Note("revoke credential")))
	assert.Equal(t, "revoke credential", fixture.Last(t, s).Decision)

	got, err := s.GetCredential(ctx, []byte("cred-1"))
	require.NoError(t, err, "a revoked credential stays readable")
	assert.True(t, at.Equal(got.RevokedAt))
	byUser, err := s.CredentialsByUser(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, byUser, 2, "listed with its revocation")
	for _, n := range []uint32{0, 3, 4, 1 << 31} {
		assert.ErrorIs(t, s.AdvanceSignCount(ctx, []byte("cred-1"), n), store.ErrRevoked, "count %d", n)
	}
	got, err = s.GetCredential(ctx, []byte("cred-1"))
	require.NoError(t, err)
	assert.Equal(t, uint32(3), got.SignCount)
	assert.NoError(t, s.AdvanceSignCount(ctx, []byte("cred-2"), 4), "other credentials still work")

	assert.ErrorIs(t, s.RevokeCredential(ctx, []byte("cred-1"), at, fixture.Note("again")), store.ErrRevoked)
	assert.ErrorIs(t, s.RevokeCredential(ctx, []byte("nope"), at, nil), store.ErrNotFound)
	assert.ErrorIs(t, s.RevokeCredential(ctx, []byte("cred-2"), time.Time{}, nil), store.ErrInvalid)
	bad := fixture.Credential("cred-3", "alice", 0)
	bad.RevokedAt = at
	assert.ErrorIs(t, s.PutCredential(ctx, bad), store.ErrInvalid, "a new credential is not revoked")
	assert.Len(t, fixture.Chain(t, s), 1)
}

// RevokeInvite checks that a revoked invite never enrolls, and that
// only an unused invite can be revoked.
func RevokeInvite(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	at := fixture.T0.Add(time.Minute)
	require.NoError(t, s.CreateInvite(ctx, fixture.Invite(1)))
	require.NoError(t, s.CreateInvite(ctx, fixture.Invite(2)))
	require.NoError(t, s.RevokeInvite(ctx, fixture.Invite(1).TokenHash, at, fixture.Note("revoke invite")))
	assert.Equal(t, "revoke invite", fixture.Last(t, s).Decision)
	got, err := s.GetInvite(ctx, fixture.Invite(1).TokenHash)
	require.NoError(t, err)
	assert.True(t, at.Equal(got.RevokedAt))
	assert.True(t, got.RedeemedAt.IsZero())
	_, err = s.RedeemInvite(ctx, fixture.Invite(1).TokenHash, at)
	assert.ErrorIs(t, err, store.ErrRevoked, "a revoked invite never enrolls")
	got, err = s.GetInvite(ctx, fixture.Invite(1).TokenHash)
	require.NoError(t, err)
	assert.True(t, got.RedeemedAt.IsZero(), "a refused redeem changes nothing")

	_, err = s.RedeemInvite(ctx, fixture.Invite(2).TokenHash, at)
	require.NoError(t, err)
	assert.ErrorIs(t, s.RevokeInvite(ctx, fixture.Invite(2).TokenHash, at, nil), store.ErrConsumed, "a used invite is not revoked")
	assert.ErrorIs(t, s.RevokeInvite(ctx, fixture.Invite(1).TokenHash, at, nil), store.ErrRevoked)
	assert.ErrorIs(t, s.RevokeInvite(ctx, [32]byte{9}, at, nil), store.ErrNotFound)
	assert.ErrorIs(t, s.RevokeInvite(ctx, fixture.Invite(1).TokenHash, time.Time{}, nil), store.ErrInvalid)
	bad := fixture.Invite(3)
	bad.RevokedAt = at
	assert.ErrorIs(t, s.CreateInvite(ctx, bad), store.ErrInvalid)
	assert.Len(t, fixture.Chain(t, s), 1)
}
