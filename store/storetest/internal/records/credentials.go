// Package records checks, for the conformance suite, the records a store
// keeps beside tickets: passkey credentials and their sign counters,
// enrollment invites, flood-control counters and streaks, and grants with
// their uses and the tickets they pay for.
package records

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Credentials checks [store.Credentials]: a credential reads back as
// stored, a user's credentials list oldest first, and the sign counter
// only moves forward (zero stays allowed until a counter was seen).
func Credentials(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	t.Run("PutGet", func(t *testing.T) {
		s := newStore(t)
		c := fixture.Credential("cred-1", "alice", 7)
		require.NoError(t, s.PutCredential(ctx, c))
		got, err := s.GetCredential(ctx, c.ID)
		require.NoError(t, err)
		got.CreatedAt = got.CreatedAt.UTC()
		assert.Equal(t, c, got)

		dup := fixture.Credential("cred-1", "mallory", 0)
		assert.ErrorIs(t, s.PutCredential(ctx, dup), store.ErrDuplicate)
		got, err = s.GetCredential(ctx, c.ID)
		require.NoError(t, err)
		assert.Equal(t, "alice", got.User, "a duplicate must not overwrite")

		_, err = s.GetCredential(ctx, []byte("nope"))
		assert.ErrorIs(t, err, store.ErrNotFound)
		assert.ErrorIs(t, s.PutCredential(ctx, store.Credential{ID: []byte("x"), User: "u"}), store.ErrInvalid)
		big := fixture.Credential("cred-big", "alice", 0)
		big.PublicKey = make([]byte, store.MaxFieldSize+1)
		assert.ErrorIs(t, s.PutCredential(ctx, big), store.ErrTooLarge)
		_, err = s.GetCredential(ctx, big.ID)
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("ByUser", func(t *testing.T) {
		s := newStore(t)
		for i, u := range []string{"alice", "bob", "alice"} {
			c := fixture.Credential(fmt.Sprintf("cred-%d", i), u, 0)
			c.CreatedAt = fixture.T0.Add(time.Duration(i) * time.Second)
			require.NoError(t, s.PutCredential(ctx, c))
		}
		got, err := s.CredentialsByUser(ctx, "alice")
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, []byte("cred-0"), got[0].ID)
		assert.Equal(t, []byte("cred-2"), got[1].ID)
		none, err := s.CredentialsByUser(ctx, "carol")
		require.NoError(t, err)
		assert.Empty(t, none)
	})
	t.Run("SignCount", func(t *testing.T) {
		cases := []struct {
			name   string
			stored uint32
			n      uint32
			want   error
			after  uint32
		}{
			{"no counter: 0 then 0", 0, 0, nil, 0},
			{"first count", 0, 1, nil, 1},
			{"increase", 5, 6, nil, 6},
			{"jump", 5, 1000, nil, 1000},
			{"same: clone", 5, 5, store.ErrCounter, 5},
			{"lower: clone", 5, 4, store.ErrCounter, 5},
			{"back to zero: clone", 5, 0, store.ErrCounter, 5},
			{"max", 1<<32 - 2, 1<<32 - 1, nil, 1<<32 - 1},
		}
		s := newStore(t)
		// A store that can advance a counter without waiting for the disk
		// (store.RelaxedSignCount) keeps the same rules that way.
		advances := map[string]func(context.Context, []byte, uint32) error{"durable": s.AdvanceSignCount}
		if r, ok := s.(store.RelaxedSignCount); ok {
			advances["relaxed"] = r.AdvanceSignCountRelaxed
		}
		for how, advance := range advances {
			t.Run(how, func(t *testing.T) {
				for i, c := range cases {
					t.Run(c.name, func(t *testing.T) {
						cred := fixture.Credential(fmt.Sprintf("cred-%s-%d", how, i), "alice", c.stored)
						require.NoError(t, s.PutCredential(ctx, cred))
						err := advance(ctx, cred.ID, c.n)
						if c.want == nil {
							assert.NoError(t, err)
						} else {
							assert.ErrorIs(t, err, c.want)
						}
						got, err := s.GetCredential(ctx, cred.ID)
						require.NoError(t, err)
						assert.Equal(t, c.after, got.SignCount)
					})
				}
				assert.ErrorIs(t, advance(ctx, []byte("nope"), 1), store.ErrNotFound)
				revoked := fixture.Credential("revoked-"+how, "alice", 3)
				require.NoError(t, s.PutCredential(ctx, revoked))
				require.NoError(t, s.RevokeCredential(ctx, revoked.ID, fixture.T0, nil))
				assert.ErrorIs(t, advance(ctx, revoked.ID, 4), store.ErrRevoked)
			})
		}
	})
}

// Invites checks [store.Invites]' creation and redemption: an invite is
// redeemed once, never after it expired, and a taken hash is refused.
func Invites(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	inv := store.Invite{TokenHash: [32]byte{1}, User: "alice", CreatedAt: fixture.T0, ExpiresAt: fixture.T0.Add(time.Hour)}
	require.NoError(t, s.CreateInvite(ctx, inv))
	assert.ErrorIs(t, s.CreateInvite(ctx, store.Invite{TokenHash: [32]byte{1}, User: "mallory", ExpiresAt: fixture.T0.Add(time.Hour)}),
		store.ErrDuplicate)
	assert.ErrorIs(t, s.CreateInvite(ctx, store.Invite{User: "bob", ExpiresAt: fixture.T0}), store.ErrInvalid)

	at := fixture.T0.Add(time.Minute)
	got, err := s.RedeemInvite(ctx, inv.TokenHash, at)
	require.NoError(t, err)
	assert.Equal(t, "alice", got.User)
	assert.True(t, at.Equal(got.RedeemedAt))
	_, err = s.RedeemInvite(ctx, inv.TokenHash, at)
	assert.ErrorIs(t, err, store.ErrConsumed, "an invite redeems once")

	late := store.Invite{TokenHash: [32]byte{2}, User: "bob", CreatedAt: fixture.T0, ExpiresAt: fixture.T0.Add(time.Hour)}
	require.NoError(t, s.CreateInvite(ctx, late))
	_, err = s.RedeemInvite(ctx, late.TokenHash, late.ExpiresAt)
	assert.ErrorIs(t, err, store.ErrExpired)
	got, err = s.RedeemInvite(ctx, late.TokenHash, late.ExpiresAt.Add(-time.Second))
	require.NoError(t, err, "a refused late redeem does not use the invite up")
	assert.Equal(t, "bob", got.User)

	_, err = s.RedeemInvite(ctx, [32]byte{9}, at)
	assert.ErrorIs(t, err, store.ErrNotFound)
}
