package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

func testConsume(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	at := t0.Add(2 * time.Minute)
	t.Run("ApprovedOnce", func(t *testing.T) {
		s := newStore(t)
		a := parkApproved(t, s, 1)
		got, err := s.Consume(ctx, a.ID, "key-1", at)
		require.NoError(t, err)
		assert.Equal(t, store.Executing, got.State)
		assert.Equal(t, "key-1", got.IdempotencyKey)
		assert.True(t, at.Equal(got.ConsumedAt))
		read, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, normalize(got), normalize(read), "the intent is recorded with the consume")

		_, err = s.Consume(ctx, a.ID, "key-2", at)
		assert.ErrorIs(t, err, store.ErrConsumed)
		_, err = s.Finish(ctx, a.ID, []byte(`"ok"`), at)
		require.NoError(t, err)
		_, err = s.Consume(ctx, a.ID, "key-3", at)
		assert.ErrorIs(t, err, store.ErrConsumed, "a finished ticket is still consumed")
		read, err = s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "key-1", read.IdempotencyKey, "refused consumes leave the first key")
	})
	t.Run("NotApproved", func(t *testing.T) {
		s := newStore(t)
		for n, to := range []store.State{store.Pending, store.Denied, store.Expired, store.Cancelled} {
			a, _, err := s.Park(ctx, Ticket("s1", "u1", n), store.Caps{})
			require.NoError(t, err)
			if to != store.Pending {
				_, err = s.Resolve(ctx, a.ID, store.Resolution{To: to, At: t0})
				require.NoError(t, err)
			}
			_, err = s.Consume(ctx, a.ID, "key", at)
			assert.ErrorIs(t, err, store.ErrNotApproved, "state %s", to)
			read, err := s.Get(ctx, a.ID)
			require.NoError(t, err)
			assert.Equal(t, to, read.State)
			assert.Empty(t, read.IdempotencyKey)
		}
	})
	t.Run("AtOrAfterExpiry", func(t *testing.T) {
		s := newStore(t)
		a := parkApproved(t, s, 1)
		for _, when := range []time.Time{a.ExpiresAt, a.ExpiresAt.Add(time.Hour)} {
			_, err := s.Consume(ctx, a.ID, "key", when)
			assert.ErrorIs(t, err, store.ErrExpired)
		}
		read, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Approved, read.State)
		assert.Empty(t, read.IdempotencyKey)
	})
	t.Run("Refusals", func(t *testing.T) {
		s := newStore(t)
		a := parkApproved(t, s, 1)
		cases := []struct {
			name, id, key string
			at            time.Time
			want          error
		}{
			{"unknown id", "no-such-ticket", "key", at, store.ErrNotFound},
			{"empty key", a.ID, "", at, store.ErrInvalid},
			{"oversized key", a.ID, strings.Repeat("k", store.MaxKeySize+1), at, store.ErrTooLarge},
			{"no time", a.ID, "key", time.Time{}, store.ErrInvalid},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.Consume(ctx, c.id, c.key, c.at)
				assert.ErrorIs(t, err, c.want)
			})
		}
		read, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Approved, read.State)
	})
}

func testFinish(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	at := t0.Add(3 * time.Minute)
	s := newStore(t)
	a := parkApproved(t, s, 1)
	_, err := s.Finish(ctx, a.ID, []byte(`"ok"`), at)
	assert.ErrorIs(t, err, store.ErrNotExecuting, "an approved ticket is not executing")
	_, err = s.Consume(ctx, a.ID, "key", at)
	require.NoError(t, err)
	_, err = s.Finish(ctx, a.ID, make([]byte, store.MaxFieldSize+1), at)
	assert.ErrorIs(t, err, store.ErrTooLarge)
	read, err := s.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Executing, read.State, "an oversized result changes nothing")

	got, err := s.Finish(ctx, a.ID, []byte(`{"paid":true}`), at)
	require.NoError(t, err)
	assert.Equal(t, store.Done, got.State)
	assert.Equal(t, []byte(`{"paid":true}`), got.Result)
	assert.True(t, at.Equal(got.FinishedAt))
	assert.Equal(t, "key", got.IdempotencyKey)
	read, err = s.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, normalize(got), normalize(read))

	_, err = s.Finish(ctx, a.ID, []byte(`"again"`), at)
	assert.ErrorIs(t, err, store.ErrNotExecuting)
	_, err = s.Finish(ctx, "no-such-ticket", nil, at)
	assert.ErrorIs(t, err, store.ErrNotFound)
	read, err = s.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, []byte(`{"paid":true}`), read.Result, "a second finish changes nothing")
}

func testRecover(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	empty, err := s.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, empty)

	var ids []string
	for n := 1; n <= 4; n++ {
		ids = append(ids, parkApproved(t, s, n).ID)
	}
	// Consume 3 then 2 then 1, so consume order differs from park order.
	for i, id := range []string{ids[2], ids[1], ids[0]} {
		_, err := s.Consume(ctx, id, "key-"+id, t0.Add(time.Duration(2+i)*time.Minute))
		require.NoError(t, err)
	}
	_, err = s.Finish(ctx, ids[1], nil, t0.Add(5*time.Minute))
	require.NoError(t, err)

	got, err := s.Recover(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2, "executing and unfinished only")
	assert.Equal(t, ids[2], got[0].ID, "oldest consume first")
	assert.Equal(t, ids[0], got[1].ID)
	for _, a := range got {
		assert.Equal(t, store.Executing, a.State)
		assert.Equal(t, "key-"+a.ID, a.IdempotencyKey)
	}
}
