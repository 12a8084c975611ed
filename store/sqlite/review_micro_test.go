package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestReviewParkExpiryWithinCreationMicrosecond: a ticket expiring within
// the microsecond it was created in is refused, as PostgreSQL refuses it.
// It used to be stored with its expiry equal to its creation (both cut to
// the microsecond): already expired, where the memory store kept it live.
func TestReviewParkExpiryWithinCreationMicrosecond(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "asu.db"))
	a := storetest.Ticket("s1", "u1", 1)
	a.ID = "short"
	a.CreatedAt = a.CreatedAt.Add(100 * time.Nanosecond)
	a.ExpiresAt = a.CreatedAt.Add(500 * time.Nanosecond)
	_, _, err := s.Park(ctx, a, store.Caps{})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.Get(ctx, "short")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
