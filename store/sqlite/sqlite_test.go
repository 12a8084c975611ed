package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
	"github.com/agentstepup/asu/store/storetest"
)

func open(t testing.TB, path string) store.Store {
	s, err := sqlite.Open(path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "asu.db"))
	})
}

func TestProcesses(t *testing.T) {
	storetest.RunProcesses(t, storetest.Processes{
		Create: func(t *testing.T) string { return filepath.Join(t.TempDir(), "asu.db") },
		Open:   open,
	})
}
