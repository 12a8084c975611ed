package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestReviewCheckExpiryWithinCreationMicrosecond: backends keep times to
// the microsecond, so a ticket that expires within the microsecond it was
// created in would be stored already expired by SQLite, refused by
// PostgreSQL's constraint and kept live by the memory store. Check refuses
// it for every backend.
func TestReviewCheckExpiryWithinCreationMicrosecond(t *testing.T) {
	cases := []struct {
		name             string
		created, expires time.Duration // after t0
		ok               bool
	}{
		{"same microsecond", 100 * time.Nanosecond, 900 * time.Nanosecond, false},
		{"equal", 0, 0, false},
		{"next microsecond", 900 * time.Nanosecond, time.Microsecond, true},
		{"a minute", 0, time.Minute, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := storetest.Ticket("s1", "u1", 1)
			a.CreatedAt, a.ExpiresAt = t0.Add(c.created), t0.Add(c.expires)
			if c.ok {
				assert.NoError(t, a.Check())
			} else {
				assert.ErrorIs(t, a.Check(), store.ErrInvalid)
			}
		})
	}
}
