package memory_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

func ExampleNew() {
	s := memory.New(nil)
	defer s.Close()
	ctx := context.Background()

	first, merged, _ := s.Park(ctx, storetest.Ticket("session-1", "alice", 1), store.Caps{}, nil)
	fmt.Println(first.State, merged)
	// The same proposal again in the same session joins the pending ticket.
	again, merged, _ := s.Park(ctx, storetest.Ticket("session-1", "alice", 1), store.Caps{}, nil)
	fmt.Println(again.ID == first.ID, merged, again.Merged)
	// Output:
	// pending false
	// true true 1
}

// A fake clock makes the store's time, and so every skew refusal and audit
// time, deterministic.
func ExampleOptions() {
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := memory.New(&memory.Options{Clock: func() time.Time { return clock }})
	defer s.Close()
	now, _ := s.Now(context.Background())
	fmt.Println(now.Format(time.RFC3339))
	// Output: 2026-03-01T12:00:00Z
}

// Check verifies the chain and the tickets held in memory.
func ExampleStore_Check() {
	s := memory.New(nil)
	defer s.Close()
	report, err := s.Check(context.Background())
	fmt.Println(report.Backend, report.Damaged(), err)
	// Output:
	// memory false <nil>
}
