package process_test

import (
	"path/filepath"
	"testing"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
	"github.com/agentstepup/asu/store/storetest/process"
)

// A backend that several processes can open wires the process tests with
// a way to make a fresh database and to open it by name.
func ExampleRun() {
	_ = func(t *testing.T) { // func TestProcesses(t *testing.T)
		process.Run(t, process.Backend{
			Create: func(t *testing.T) string { return filepath.Join(t.TempDir(), "asu.db") },
			Open: func(t testing.TB, target string) store.Store {
				s, err := sqlite.Open(t.Context(), target, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			},
		})
	}
}

// A backend whose server a test can stop and start again runs the kill
// campaign across a restart; Restart returns once the server accepts
// connections again.
func ExampleRunRestart() {
	_ = func(t *testing.T, newDatabase func(*testing.T) string, open func(testing.TB, string) store.Store,
		restartServer func(*testing.T)) { // func TestProcessesAcrossRestart(t *testing.T)
		process.RunRestart(t, process.Backend{Create: newDatabase, Open: open, Restart: restartServer})
	}
}
