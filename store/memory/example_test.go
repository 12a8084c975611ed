package memory_test

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

func ExampleNew() {
	s := memory.New()
	defer s.Close()
	ctx := context.Background()

	first, merged, _ := s.Park(ctx, storetest.Ticket("session-1", "alice", 1), store.Caps{})
	fmt.Println(first.State, merged)
	// The same effect again in the same session joins the pending ticket.
	again, merged, _ := s.Park(ctx, storetest.Ticket("session-1", "alice", 1), store.Caps{})
	fmt.Println(again.ID == first.ID, merged, again.Merged)
	// Output:
	// pending false
	// true true 1
}
