package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

// The life of a ticket: parked, approved, consumed once, finished.
func Example() {
	var s store.Store = memory.New()
	defer s.Close()
	ctx := context.Background()

	t, _, _ := s.Park(ctx, storetest.Ticket("session-1", "alice", 1), store.Caps{PerSession: 5, PerUser: 20})
	now := t.CreatedAt.Add(time.Minute)
	_, _ = s.Resolve(ctx, t.ID, store.Resolution{To: store.Approved, Approver: "bob", At: now})
	t, _ = s.Consume(ctx, t.ID, "idem-1", now)
	fmt.Println(t.State, t.IdempotencyKey)

	_, err := s.Consume(ctx, t.ID, "idem-2", now)
	fmt.Println(errors.Is(err, store.ErrConsumed))

	t, _ = s.Finish(ctx, t.ID, []byte(`{"paid":true}`), now)
	fmt.Println(t.State)
	// Output:
	// executing idem-1
	// true
	// done
}

func ExampleNewID() {
	fmt.Println(len(store.NewID()))
	// Output: 32
}
