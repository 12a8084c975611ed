package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/agentstepup/asu/store/storetest"
)

// TestWatchAcross: a watch wakes when another handle on the file, as
// another process's would, commits a change.
func TestWatchAcross(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asu.db")
	storetest.WatchAcross(t, open(t, path), open(t, path))
}
