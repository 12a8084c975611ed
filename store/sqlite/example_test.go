package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
	"github.com/agentstepup/asu/store/storetest"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "asu")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	ctx := context.Background()
	t, _, err := s.Park(ctx, storetest.Ticket("session-1", "alice", 1), store.Caps{PerSession: 5})
	if err != nil {
		panic(err)
	}
	approvedAt := t.CreatedAt.Add(time.Minute)
	if _, err := s.Resolve(ctx, t.ID, store.Resolution{To: store.Approved, Approver: "bob", At: approvedAt}); err != nil {
		panic(err)
	}
	t, err = s.Consume(ctx, t.ID, "step-1", approvedAt)
	fmt.Println(t.State, err)
	_, err = s.Consume(ctx, t.ID, "step-1", approvedAt)
	fmt.Println(err)
	// Output:
	// executing <nil>
	// sqlite: consume: store: already used
}
