package stepup_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// Wait returns the ticket as last read when its context ends, whether the
// context ends while Wait sleeps or while it reads the store.
func TestWaitReturnsLastReadTicketWhenContextEnds(t *testing.T) {
	w := newWorld(t, stepup.WithPollInterval(time.Millisecond))
	id := w.pending(t, "finance@example.com")
	for range 50 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+time.Now().UnixNano()%3)*time.Millisecond)
		tk, err := w.Gate.Wait(ctx, id)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, id, tk.ID)
		assert.Equal(t, stepup.StatusPending, tk.Status)
	}
}
