package gate_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestFloodAcrossGatesOnSQLite: two gates, each with its own connection
// pool on one database file and flood's default limits, share the rate,
// the pending caps and the lockouts, also under concurrent proposals.
func TestFloodAcrossGatesOnSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "asu.db")
	clock := stepuptest.NewClock(stepuptest.Start())
	var gates []*gate.Gate
	for range 2 {
		db := openSQLiteAt(t, path, clock)
		g, err := gate.New(db, stepuptest.SeedCatalog(), stepuptest.Passkeys(db))
		require.NoError(t, err)
		gates = append(gates, g)
	}
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(openSQLiteAt(t, path, clock)), stepuptest.Approver)
	require.NoError(t, err)

	var mu sync.Mutex
	parked := 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			tk, err := gates[i%2].Propose(ctx, floodCall("sess-sql", "user:dana", i))
			assert.NoError(t, err)
			if tk.Status == stepup.StatusPending {
				mu.Lock()
				parked++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, flood.DefaultPendingPerSession, parked, "one queue cap across both gates")

	for i := range flood.DefaultSessionLockout.After {
		tk, err := gates[1].Propose(ctx, floodCall("sess-deny", "user:dana", i))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		_, err = stepuptest.Deny(ctx, gates[1].Desk(), dana, tk.ID, "")
		require.NoError(t, err)
	}
	tk, err := gates[0].Propose(ctx, floodCall("sess-deny", "user:dana", 99))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Contains(t, tk.Reason, "locked out", "denials at one gate lock the session out at the other")
}
