package gate_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
)

func openSQLite(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	return openSQLiteAt(t, path, nil)
}

// openSQLiteAt opens the database at path on clock (nil: the wall clock).
func openSQLiteAt(t *testing.T, path string, clock *stepuptest.Clock) *sqlite.Store {
	t.Helper()
	var o sqlite.Options
	if clock != nil {
		o.Clock = clock.Now
	}
	st, err := sqlite.Open(t.Context(), path, &o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestCrashRecoveryOnSQLite closes the database between the crash and the
// recovery, as a restarted process would reopen it.
func TestCrashRecoveryOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asu.db")
	clock := stepuptest.NewClock(stepuptest.Start())
	st := openSQLiteAt(t, path, clock)
	recoverScenario(t, clock, st, func() store.Store {
		require.NoError(t, st.Close())
		return openSQLiteAt(t, path, clock)
	})
}

// TestExecuteOnceAcrossGatesOnSQLite runs 64 concurrent Executes of one
// ticket spread over two gates, each with its own connection pool on one
// database file.
func TestExecuteOnceAcrossGatesOnSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "asu.db")
	exec := &recorder{}
	clock := stepuptest.NewClock(stepuptest.Start())
	var gates []*gate.Gate
	key := []byte("the key both gates of one store share!")
	for range 2 {
		db := openSQLiteAt(t, path, clock)
		g, err := gate.New(db, stepuptest.SeedCatalog(), stepuptest.Passkeys(db),
			gate.WithExecutor("write_draft", exec), gate.WithKey(key))
		require.NoError(t, err)
		gates = append(gates, g)
	}
	tk, err := gates[0].Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)
	const n = 64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = gates[i%2].Execute(ctx, tk.ID)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, stepup.ErrConsumed) {
			t.Errorf("unexpected error: %v", err)
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, 1, exec.Count())
}
