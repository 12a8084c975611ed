package core

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBackgroundQueuesAndNeverDrops: with every worker held, work waits
// and all of it runs once the workers are free; work that would
// pass the queue's bound runs on the caller's path; a panic is contained;
// Settle waits for what runs and what waits.
func TestBackgroundQueuesAndNeverDrops(t *testing.T) {
	var g Gate
	hold := make(chan struct{})
	var ran atomic.Int64
	for range MaxBackground {
		require.True(t, g.Background(func() { <-hold; ran.Add(1) }, 1))
	}
	const waiting = 100
	for i := range waiting {
		require.True(t, g.Background(func() {
			ran.Add(1)
			if i == 0 {
				panic("contained")
			}
		}, MaxBackgroundQueue/(2*waiting)))
	}
	inline := false
	assert.False(t, g.Background(func() { inline = true }, MaxBackgroundQueue), "past the bound: on the caller's path")
	assert.True(t, inline, "run before Background returns")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, g.Settle(ctx), context.DeadlineExceeded, "workers still held")
	close(hold)
	require.NoError(t, g.Settle(context.Background()))
	assert.Equal(t, int64(MaxBackground+waiting), ran.Load(), "nothing dropped")
}
