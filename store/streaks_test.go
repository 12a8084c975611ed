package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// onlyCounters hides every method but those of store.Counters, so that
// store.GetStreaks takes its fallback.
type onlyCounters struct{ store.Counters }

// TestGetStreaksFallback: on counters without a StreakReader, GetStreaks
// reads one streak per key, with the same answers and refusals.
func TestGetStreaksFallback(t *testing.T) {
	ctx := t.Context()
	m := memory.New(nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	_, err := m.IncrStreak(ctx, "deny:a", at)
	require.NoError(t, err)
	_, err = m.IncrStreak(ctx, "deny:a", at)
	require.NoError(t, err)
	c := onlyCounters{m}
	_, ok := store.Counters(c).(store.StreakReader)
	require.False(t, ok)
	keys := []string{"deny:b", "deny:a", "deny:a"}
	got, err := store.GetStreaks(ctx, c, keys)
	require.NoError(t, err)
	want, err := store.GetStreaks(ctx, m, keys)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 2, got[1].Count)
	_, err = store.GetStreaks(ctx, c, []string{""})
	assert.ErrorIs(t, err, store.ErrInvalid)
}

func ExampleGetStreaks() {
	ctx := context.Background()
	m := memory.New(nil)
	_, _ = m.IncrStreak(ctx, "deny:user:dana", time.Now())
	got, err := store.GetStreaks(ctx, m, []string{"deny:user:dana", "deny:user:eve"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got[0].Count, got[1].Count)
	// Output: 1 0
}
