package flood_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store/sqlite"
)

// TestSQLiteReplicas: two limiters, each with its own connection pool on
// one SQLite file, as two gate processes on one machine would be.
func TestSQLiteReplicas(t *testing.T) {
	ctx := context.Background()
	first, second := openSQLiteReplicas(t)
	c := newClock()
	limits := flood.Limits{
		Session:        flood.Rate{N: 4, Per: time.Minute},
		User:           flood.Rate{N: -1},
		SessionLockout: flood.Lockout{After: 2, For: time.Minute},
		UserLockout:    flood.Lockout{After: -1},
	}
	a := newLimiter(t, first, limits, c)
	b := newLimiter(t, second, limits, c)

	admitted := 0
	for i := range 40 {
		if err := []*flood.Limiter{a, b}[i%2].Admit(ctx, req("s1", "alice")); err == nil {
			admitted++
		} else {
			require.ErrorIs(t, err, flood.ErrRateLimited)
		}
	}
	assert.Equal(t, 4, admitted)

	// The previous window carries over in SQLite too.
	c.Set(t0.Add(time.Minute))
	assert.ErrorIs(t, a.Admit(ctx, req("s1", "alice")), flood.ErrRateLimited)

	// Denials recorded by one replica lock the session on the other.
	require.NoError(t, a.Decided(ctx, req("s2", "alice"), false))
	require.NoError(t, b.Decided(ctx, req("s2", "alice"), false))
	assert.ErrorIs(t, b.Admit(ctx, req("s2", "alice")), flood.ErrLockedOut)
	assert.ErrorIs(t, a.Admit(ctx, req("s2", "alice")), flood.ErrLockedOut)
	require.NoError(t, b.Decided(ctx, req("s2", "alice"), true))
	assert.NoError(t, a.Admit(ctx, req("s2", "alice")))
}

// openSQLiteReplicas opens one SQLite file twice, each with its own
// connection pool, as two gate processes on one machine would.
func openSQLiteReplicas(t *testing.T) (*sqlite.Store, *sqlite.Store) {
	path := filepath.Join(t.TempDir(), "gate.db")
	open := func() *sqlite.Store {
		s, err := sqlite.Open(t.Context(), path, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	return open(), open()
}
