package memory

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

// TestRefundsLeaveNothing: counts added and refunded over many keys and
// windows, in generated orders and clock offsets, leave no entry behind.
func TestRefundsLeaveNothing(t *testing.T) {
	s := New(nil)
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i := range 2000 {
		key := fmt.Sprintf("rate:fresh-%d", i%300)
		w := t0.Add(time.Duration(rng.IntN(5)-2) * time.Hour)
		ops := []store.CountOp{{Key: key, Window: w, Delta: 1}, {Key: key, Window: w.Add(-time.Hour)}}
		_, err := s.AddCounts(t.Context(), ops)
		require.NoError(t, err)
		_, err = s.AddCounts(t.Context(), []store.CountOp{{Key: key, Window: w, Delta: -1}})
		require.NoError(t, err)
	}
	assert.Empty(t, s.windows, "refused requests leave no counter state")
}
