package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

// The life of a ticket: parked, approved, consumed once by one gate,
// finished; each decision with its audit row.
func Example() {
	var s store.Store = memory.New(nil)
	defer s.Close()
	ctx := context.Background()
	note := func(decision string) store.Note {
		return func(a store.Approval, merged bool) audit.Record {
			return audit.Record{TicketID: a.ID, Decision: decision, Reason: string(a.State)}
		}
	}

	now, _ := s.Now(ctx)
	t, _, _ := s.Park(ctx, storetest.TicketAt("session-1", "alice", 1, now), store.Caps{PerSession: 5, PerUser: 20},
		note("needs approval"))
	_, _ = s.Resolve(ctx, t.ID, store.Resolution{To: store.Approved, Approver: "alice", At: now}, note("approve"))
	claim := store.Claim{Key: "idem-1", Owner: "gate-a", At: now, LeaseUntil: now.Add(30 * time.Second)}
	t, _ = s.Consume(ctx, t.ID, claim, note("execute"))
	fmt.Println(t.State, t.IdempotencyKey, t.Owner, t.Fence)

	claim.Key, claim.Owner = "idem-2", "gate-b"
	_, err := s.Consume(ctx, t.ID, claim, note("execute"))
	fmt.Println(errors.Is(err, store.ErrConsumed))

	t, _ = s.Finish(ctx, t.ID, t.Fence, store.Outcome{State: store.Done, Result: []byte(`{"paid":true}`), At: now},
		note("executed"))
	fmt.Println(t.State)
	rows, _ := s.AuditSeq(ctx, 1, 10)
	for _, r := range rows {
		fmt.Println(r.Seq, r.Decision, r.Reason)
	}
	// Output:
	// executing idem-1 gate-a 1
	// true
	// done
	// 1 needs approval pending
	// 2 approve approved
	// 3 execute executing
	// 4 executed done
}

// A gate that crashed mid-execution leaves its ticket executing under a
// lease; once the lease has expired, another gate takes it over with the
// same idempotency key and the next fence, and the crashed gate is fenced
// off.
func ExampleExecution_Reclaim() {
	s := memory.New(nil)
	defer s.Close()
	ctx := context.Background()
	now, _ := s.Now(ctx)
	a := storetest.TicketAt("session-1", "alice", 1, now)
	a.State, a.Approver = store.Approved, "policy"
	t, _, _ := s.Park(ctx, a, store.Caps{}, nil)
	_, _ = s.Consume(ctx, t.ID, store.Claim{Key: "idem-1", Owner: "gate-a", At: now.Add(-time.Second),
		LeaseUntil: now.Add(-time.Second / 2)}, nil)

	expired, _ := s.Expired(ctx, now, 0)
	t, err := s.Reclaim(ctx, expired[0].ID, expired[0].Fence,
		store.Claim{Owner: "gate-b", At: now, LeaseUntil: now.Add(30 * time.Second)}, nil)
	fmt.Println(t.Owner, t.Fence, t.IdempotencyKey, err)
	_, err = s.Finish(ctx, t.ID, 1, store.Outcome{State: store.Done, At: now}, nil)
	fmt.Println(errors.Is(err, store.ErrFenced))
	// Output:
	// gate-b 2 idem-1 <nil>
	// true
}

func ExampleNewID() {
	fmt.Println(len(store.NewID()))
	// Output: 32
}

// A counter key pruned once its newest window is old: the gate does this
// from Gate.Maintain for the keys it owns.
func ExampleCountPruner() {
	s := memory.New(nil)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	_, _ = s.AddCount(ctx, "flood/v2/rate/old", t0, 3)
	_, _ = s.AddCount(ctx, "flood/v2/rate/new", t0.Add(48*time.Hour), 1)
	_, _ = s.AddCount(ctx, "other/old", t0, 1)
	var p store.CountPruner = s
	n, err := p.PruneCounts(ctx, "flood/", t0.Add(24*time.Hour), 0)
	fmt.Println(n, err)
	old, _ := s.AddCount(ctx, "flood/v2/rate/old", t0, 0)
	other, _ := s.AddCount(ctx, "other/old", t0, 0)
	fmt.Println(old, other)
	// Output:
	// 1 <nil>
	// 0 1
}

func ExamplePrefixEnd() {
	fmt.Println(store.PrefixEnd("flood/"), store.PrefixEnd("a\xff") == "b")
	// Output: flood0 true
}

func ExampleCheckPrune() {
	limit, err := store.CheckPrune("flood/", time.Now(), 0)
	fmt.Println(limit == store.MaxPruneKeys, err)
	_, err = store.CheckPrune("", time.Now(), 0)
	fmt.Println(errors.Is(err, store.ErrInvalid))
	// Output:
	// true <nil>
	// true
}
