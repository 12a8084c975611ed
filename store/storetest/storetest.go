// Package storetest is the conformance suite every [store.Store] backend
// runs, in the manner of gocloud's drivertest: a backend's test file only
// supplies a constructor.
//
// # Conformance
//
// [Run] checks every transition and every refusal of the store interfaces:
// merging only identical proposals, expiry, pending caps, leases and
// fencing, revocation, listing, showings and votes towards a quorum, the
// store's clock and its skew refusal, the
// audit chain (with [receipt.VerifyChain]) and its times, grants' remaining
// uses and their use with a park, the credential counter rule, single-use
// invites; that every state change and its audit record appear together or
// not at all (a note the chain refuses leaves the state unchanged); that
// nothing is half-written by bad input, a closed store or a cancelled
// context; and concurrency: 64 goroutines race on one ticket's consume,
// reclaim, finish and revocation, one audit chain, one pending cap, one
// grant's last use, and one ticket's votes (each approver counts once, the
// quorum approves once).
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s := mybackend.Open(...)
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// # Clock
//
// [Run] reads the store's clock and never sets it, so it runs on a
// database's clock. [RunClock] sets it, for backends that take an injected
// clock: audit times never decrease while the clock steps back and forth,
// and a gate whose clock is slow is refused.
//
// # Processes
//
// [RunProcesses] races separate processes on one database and kills a
// process between Consume and Finish. The test binary re-executes itself;
// see [Processes] for how a backend wires it.
//
// # Benchmarks
//
// [Bench] measures consume+finish round trips, whole approval cycles, a
// lease renewal next to a read, parking, and the pending-cap check with
// 100,000 pending tickets, next to a baseline of one empty transaction on
// the same backend.
package storetest

import (
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
// each time it is called and close it when t ends. The suite reads the
// store's clock ([store.Clock]) and never needs to set it, so it runs on a
// database clock as well as on an injected one.
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
		{"ParkApproved", testParkApproved},
		{"Merge", testMerge},
		{"Caps", testCaps},
		{"Resolve", testResolve},
		{"Revoke", testRevoke},
		{"ExpirePending", testExpirePending},
		{"List", testList},
		{"NoAliasing", testNoAliasing},
		{"Consume", testConsume},
		{"Renew", testRenew},
		{"Finish", testFinish},
		{"Expired", testExpired},
		{"Reclaim", testReclaim},
		{"Clock", testClock},
		{"Notes", testNotes},
		{"Credentials", testCredentials},
		{"RevokeCredential", testRevokeCredential},
		{"Invites", testInvites},
		{"GetInvite", testGetInvite},
		{"RevokeInvite", testRevokeInvite},
		{"Counters", testCounters},
		{"Streaks", testStreaks},
		{"Audit", testAudit},
		{"Grants", testGrants},
		{"RevokeGrant", testRevokeGrant},
		{"ParkGranted", testParkGranted},
		{"Votes", func(t *testing.T, newStore func(*testing.T) store.Store) { testVotes(t, newStore, o.concurrency) }},
		{"Closed", testClosed},
		{"Cancelled", testCancelled},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, newStore) })
	}
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newStore, o.concurrency) })
}

// t0 is the creation time of records whose times decide nothing (counters,
// credentials, invites): any fixed time works for them. Tests of deciding
// methods use the store's clock instead ([now]).
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ttl is the lifetime of the suite's tickets.
const ttl = 10 * time.Minute

// lease is the execution lease the suite's claims take.
const lease = 30 * time.Second

// now reads s's clock, to the millisecond, so that it survives every
// backend's precision.
func now(t testing.TB, s store.Store) time.Time {
	t.Helper()
	n, err := s.Now(t.Context())
	if err != nil {
		t.Fatalf("now: %v", err)
	}
	return n.UTC().Truncate(time.Millisecond)
}

// Ticket returns a valid new pending ticket in session and user whose
// effect is numbered n, created at a fixed time in 2026: tickets with
// different n have different digests. It is exported for benchmarks and
// backend-specific tests; use [TicketAt] for a ticket that deciding methods
// should accept.
func Ticket(session, user string, n int) store.Approval {
	return TicketAt(session, user, n, t0)
}

// TicketAt is [Ticket] created at created and expiring ten minutes later.
func TicketAt(session, user string, n int, created time.Time) store.Approval {
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
		CreatedAt:     created,
		ExpiresAt:     created.Add(ttl),
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

// claim is the claim of owner at at, with the suite's lease.
func claim(key, owner string, at time.Time) store.Claim {
	return store.Claim{Key: key, Owner: owner, At: at, LeaseUntil: at.Add(lease)}
}

// done is a successful outcome at at.
func done(at time.Time) store.Outcome {
	return store.Outcome{State: store.Done, Result: []byte(`"ok"`), At: at}
}

// parkApproved parks and approves a new ticket numbered n, created now.
func parkApproved(t testing.TB, s store.Store, n int) store.Approval {
	t.Helper()
	ctx := t.Context()
	at := now(t, s)
	a, _, err := s.Park(ctx, TicketAt("s1", "u1", n, at), store.Caps{}, note("park"))
	if err != nil {
		t.Fatalf("park: %v", err)
	}
	a, err = s.Resolve(ctx, a.ID, approve(at), note("approve"))
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	return a
}

// parkExecuting parks, approves and consumes a new ticket numbered n as
// owner, with a lease that ends at leaseUntil (which may be in the past,
// within [store.MaxSkew] of the store's clock).
func parkExecuting(t testing.TB, s store.Store, n int, owner string, leaseUntil time.Time) store.Approval {
	t.Helper()
	a := parkApproved(t, s, n)
	at := leaseUntil.Add(-time.Millisecond)
	if n := now(t, s); at.After(n) {
		at = n
	}
	a, err := s.Consume(t.Context(), a.ID, store.Claim{Key: "key-" + a.ID, Owner: owner, At: at, LeaseUntil: leaseUntil},
		note("consume"))
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	return a
}

// normalize makes records comparable across backends: times in UTC without
// monotonic readings, empty slices as nil.
func normalize(a store.Approval) store.Approval {
	for _, p := range []*time.Time{&a.CreatedAt, &a.ExpiresAt, &a.ResolvedAt, &a.ConsumedAt, &a.LeaseUntil, &a.FinishedAt,
		&a.ShownAt} {
		*p = p.UTC()
	}
	if len(a.Votes) == 0 {
		a.Votes = nil
	} else {
		votes := make([]store.Vote, len(a.Votes))
		for i, v := range a.Votes {
			v.At = v.At.UTC()
			if len(v.Evidence) == 0 {
				v.Evidence = nil
			}
			votes[i] = v
		}
		a.Votes = votes
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
