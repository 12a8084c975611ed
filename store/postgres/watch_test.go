package postgres_test

import (
	"testing"

	"github.com/agentstepup/asu/store/storetest"
)

// TestWatchAcross: a watch wakes when another replica's handle commits a
// change, through the database's notifications.
func TestWatchAcross(t *testing.T) {
	schema := newSchema(t)
	storetest.WatchAcross(t, open(t, schema), open(t, schema))
}
