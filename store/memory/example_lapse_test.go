package memory_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

// A ticket two people approved goes back to pending when one of the votes
// no longer counts, keeping the other.
func ExampleStore_Reopen() {
	at := storetest.Ticket("s", "alice", 1).CreatedAt
	s := memory.New(&memory.Options{Clock: func() time.Time { return at }})
	defer s.Close()
	ctx := context.Background()
	t, _, _ := s.Park(ctx, storetest.Ticket("s", "alice", 1), store.Caps{}, nil)
	for _, who := range []string{"user:dana", "user:erin"} {
		t, _ = s.Vote(ctx, t.ID, store.Vote{Approver: who, At: at}, 2, "two of finance", nil)
	}
	fmt.Println(t.State)
	t, err := s.Reopen(ctx, t.ID, store.Lapse{At: at, ApprovedAt: t.ResolvedAt, Keep: []string{"user:dana"},
		Reason: "user:erin left finance"}, nil)
	fmt.Println(t.State, len(t.Votes), t.Reason, err)
	// Output:
	// approved
	// pending 1 user:erin left finance <nil>
}

// An answer refused as too soon is marked, so that every gate on the
// store refuses it again.
func ExampleStore_MarkEarly() {
	s := memory.New(nil)
	defer s.Close()
	ctx := context.Background()
	key := sha256.Sum256([]byte("the answer's bytes"))
	_ = s.MarkEarly(ctx, "ticket-1", key, time.Now().Add(time.Hour))
	seen, _ := s.WasEarly(ctx, "ticket-1", key)
	fmt.Println(seen)
	// Output: true
}
