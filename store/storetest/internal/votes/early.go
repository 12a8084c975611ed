package votes

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// testEarly checks [store.Early]: a mark is seen by its ticket only,
// marking again changes nothing, a ticket keeps at most
// [store.MaxEarly] marks, and bad input is refused.
func testEarly(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	at := fixture.Now(t, s)
	key := func(i int) [32]byte { return sha256.Sum256(fmt.Appendf(nil, "answer %d", i)) }
	seen, err := s.WasEarly(ctx, "t1", key(0))
	require.NoError(t, err)
	assert.False(t, seen, "nothing marked yet")
	require.NoError(t, s.MarkEarly(ctx, "t1", key(0), at))
	require.NoError(t, s.MarkEarly(ctx, "t1", key(0), at), "marking again changes nothing")
	for _, c := range []struct {
		id   string
		k    int
		want bool
	}{{"t1", 0, true}, {"t1", 1, false}, {"t2", 0, false}} {
		seen, err := s.WasEarly(ctx, c.id, key(c.k))
		require.NoError(t, err)
		assert.Equal(t, c.want, seen, "%s %d", c.id, c.k)
	}
	for i := 1; i < store.MaxEarly; i++ {
		require.NoError(t, s.MarkEarly(ctx, "t1", key(i), at))
	}
	assert.ErrorIs(t, s.MarkEarly(ctx, "t1", key(store.MaxEarly), at), store.ErrTooLarge, "a ticket's marks are bounded")
	assert.NoError(t, s.MarkEarly(ctx, "t1", key(3), at), "a mark already kept is no new one")
	seen, err = s.WasEarly(ctx, "t1", key(store.MaxEarly-1))
	require.NoError(t, err)
	assert.True(t, seen)
	require.NoError(t, s.MarkEarly(ctx, "t2", key(0), at), "the bound is per ticket")
	assert.ErrorIs(t, s.MarkEarly(ctx, "", key(0), at), store.ErrInvalid)
	assert.ErrorIs(t, s.MarkEarly(ctx, "t3", key(0), time.Time{}), store.ErrInvalid)
}
