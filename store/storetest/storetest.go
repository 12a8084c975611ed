// Package storetest is the conformance suite every [store.Store] backend
// runs, in the manner of gocloud's drivertest: a backend's test file only
// supplies a constructor.
//
// # Conformance
//
// [Run] checks every transition and every refusal of the store interfaces,
// duplicate merging, expiry, pending caps, the audit chain (with
// [receipt.VerifyChain]), grants' remaining uses, the credential counter
// rule, single-use invites, that nothing is half-written by bad input, a
// closed store or a cancelled context, and concurrency: 64 goroutines race
// on one ticket, one audit chain, one pending cap.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s := mybackend.Open(...)
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// # Processes
//
// [RunProcesses] races separate processes on one database and kills a
// process between Consume and Finish. The test binary re-executes itself;
// see [Processes] for how a backend wires it.
//
// # Benchmarks
//
// [Bench] measures consume+finish round trips, parking, and the pending-cap
// check with 100,000 pending tickets, next to a baseline of one empty
// transaction on the same backend.
package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// Option adjusts [Run] for a backend that cannot do something.
type Option func(*options)

type options struct {
	concurrency int
}

// WithConcurrency sets how many goroutines race in the concurrency tests
// (default 64). A backend that serializes on a small connection pool may
// lower it, never below 2.
func WithConcurrency(n int) Option {
	return func(o *options) {
		if n >= 2 {
			o.concurrency = n
		}
	}
}

// Run runs the conformance suite. newStore must return a new, empty store
// each time it is called and close it when t ends.
func Run(t *testing.T, newStore func(t *testing.T) store.Store, opts ...Option) {
	o := options{concurrency: 64}
	for _, f := range opts {
		f(&o)
	}
	groups := []struct {
		name string
		run  func(*testing.T, func(*testing.T) store.Store)
	}{
		{"Park", testPark},
		{"Merge", testMerge},
		{"Caps", testCaps},
		{"Resolve", testResolve},
		{"Consume", testConsume},
		{"Finish", testFinish},
		{"Recover", testRecover},
		{"ExpirePending", testExpirePending},
		{"Pending", testPending},
		{"NoAliasing", testNoAliasing},
		{"Credentials", testCredentials},
		{"Invites", testInvites},
		{"GetInvite", testGetInvite},
		{"Counters", testCounters},
		{"Streaks", testStreaks},
		{"Audit", testAudit},
		{"Grants", testGrants},
		{"Closed", testClosed},
		{"Cancelled", testCancelled},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, newStore) })
	}
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newStore, o.concurrency) })
}

// t0 is the time the suite's tickets are created at. The suite never reads
// the clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ttl is the lifetime of the suite's tickets.
const ttl = 10 * time.Minute

// Ticket returns a valid new ticket in session and user whose effect is
// numbered n: tickets with different n have different digests. It is
// exported for benchmarks and backend-specific tests.
func Ticket(session, user string, n int) store.Approval {
	effect := []byte(fmt.Sprintf(`{"args":{"amount":%d},"tool":"pay"}`, n))
	card := []byte(fmt.Sprintf(`{"title":"pay %d"}`, n))
	var nonce [32]byte
	copy(nonce[:], fmt.Sprintf("nonce-%d", n))
	return store.Approval{
		Effect:        effect,
		Digest:        canon.Sum(effect),
		Tool:          "pay",
		EffectClass:   "irreversible",
		Card:          card,
		CardHash:      canon.Sum(card),
		Nonce:         nonce,
		CreatedAt:     t0,
		ExpiresAt:     t0.Add(ttl),
		Requester:     canon.Principal{User: user, Agent: "agent-1", Delegations: []string{"planner"}},
		User:          user,
		Session:       session,
		Task:          "task-1",
		Step:          fmt.Sprintf("step-%d", n),
		PolicyVersion: "v1",
		Taint:         []string{"web"},
		Rationale:     "the user asked for it",
	}
}

// approve is the resolution the suite approves with.
func approve(at time.Time) store.Resolution {
	return store.Resolution{To: store.Approved, Approver: "alice", Reason: "ok", Evidence: []byte(`{"sig":"x"}`), At: at}
}

// parkApproved parks and approves a new ticket numbered n.
func parkApproved(t testing.TB, s store.Store, n int) store.Approval {
	t.Helper()
	ctx := context.Background()
	a, _, err := s.Park(ctx, Ticket("s1", "u1", n), store.Caps{})
	if err != nil {
		t.Fatalf("park: %v", err)
	}
	a, err = s.Resolve(ctx, a.ID, approve(t0.Add(time.Minute)))
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	return a
}

// normalize makes records comparable across backends: times in UTC without
// monotonic readings, empty slices as nil.
func normalize(a store.Approval) store.Approval {
	for _, p := range []*time.Time{&a.CreatedAt, &a.ExpiresAt, &a.ResolvedAt, &a.ConsumedAt, &a.FinishedAt} {
		*p = p.UTC()
	}
	for _, p := range []*[]byte{&a.Effect, &a.Card, &a.Evidence, &a.Result} {
		if len(*p) == 0 {
			*p = nil
		}
	}
	if len(a.Taint) == 0 {
		a.Taint = nil
	}
	if len(a.Requester.Delegations) == 0 {
		a.Requester.Delegations = nil
	}
	return a
}
