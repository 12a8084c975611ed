package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
	"github.com/agentstepup/asu/store/storetest"
	"github.com/agentstepup/asu/store/storetest/process"
)

func open(t testing.TB, path string) store.Store {
	s, err := sqlite.Open(t.Context(), path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestProcesses(t *testing.T) {
	process.Run(t, process.Backend{
		Create: func(t *testing.T) string { return filepath.Join(t.TempDir(), "asu.db") },
		Open:   open,
	})
}

func TestClock(t *testing.T) {
	storetest.RunClock(t, func(t *testing.T, clock func() time.Time) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "asu.db"), &sqlite.Options{Clock: clock})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
