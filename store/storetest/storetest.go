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
// audit chain (with [asuaudit.VerifyChain]) and its times, grants' remaining
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
// Package [github.com/agentstepup/asu/store/storetest/process] races
// separate processes on one database, kills a process between Consume and
// Finish, and kills gates mid-work, for backends that several processes
// can open at once.
//
// # Benchmarks
//
// [Bench] measures consume+finish round trips, whole approval cycles, a
// lease renewal next to a read, parking, and the pending-cap check with
// 100,000 pending tickets, next to a baseline of one empty transaction on
// the same backend.
//
// # Layout
//
// [Run] is the one entry point of the suite; its groups live in internal
// packages by concern, each a list of subtests: tickets (parking, merging,
// caps, resolution, listing), execution (consume, leases, fencing), votes,
// audit (the chain and the notes written with each decision), records
// (credentials, invites, counters, grants), interrupt (a closed store, a
// cancelled context), concurrent (the races) and damage (rows changed
// behind the store's back, with [WithAuditTamper]). What they share (the
// tickets and records they store, the chain check) is in
// internal/fixture; [Ticket], [TicketAt] and [Record] hand it to
// backend-specific tests.
package storetest

import (
	"testing"
	"time"

	asuaudit "github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/audit"
	"github.com/agentstepup/asu/store/storetest/internal/concurrent"
	"github.com/agentstepup/asu/store/storetest/internal/damage"
	"github.com/agentstepup/asu/store/storetest/internal/execution"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
	"github.com/agentstepup/asu/store/storetest/internal/interrupt"
	"github.com/agentstepup/asu/store/storetest/internal/records"
	"github.com/agentstepup/asu/store/storetest/internal/tickets"
	"github.com/agentstepup/asu/store/storetest/internal/votes"
)

// Option adjusts [Run] for a backend that cannot do something.
type Option func(*options)

type options struct {
	concurrency int
	tamper      damage.Tamper
}

// WithAuditTamper gives the suite the backend's test hook that replaces
// the stored audit row r.Seq with r as given, bypassing every check of
// the store (an UPDATE of the row, an edit of the file). With it, [Run]
// holds the backend to reading back only what it wrote: a row that does
// not match its hash, or does not link to the row before it, is
// [store.ErrCorrupt] on every read, at the next append and in
// [store.Checker], and from then on every deciding call fails with
// [store.ErrCorrupt] and writes nothing, while the audit chain, tickets
// and grants stay readable. Without it the suite skips those cases, and
// says so.
func WithAuditTamper(tamper func(t *testing.T, s store.Store, r asuaudit.Record)) Option {
	return func(o *options) { o.tamper = tamper }
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
		{"Park", tickets.Park},
		{"ParkApproved", tickets.ParkAllowed},
		{"Merge", tickets.Merge},
		{"Caps", tickets.Caps},
		{"Resolve", tickets.Resolve},
		{"Revoke", tickets.Revoke},
		{"ExpirePending", tickets.ExpirePending},
		{"List", tickets.List},
		{"Queue", tickets.Queue},
		{"Watch", tickets.Watch},
		{"NoAliasing", tickets.NoAliasing},
		{"Consume", execution.Consume},
		{"Renew", execution.Renew},
		{"Finish", execution.Finish},
		{"Expired", execution.Expired},
		{"Reclaim", execution.Reclaim},
		{"Clock", testClock},
		{"Notes", audit.Notes},
		{"Credentials", records.Credentials},
		{"RevokeCredential", records.RevokeCredential},
		{"Invites", records.Invites},
		{"GetInvite", records.GetInvite},
		{"RevokeInvite", records.RevokeInvite},
		{"Counters", records.Counters},
		{"CounterBatches", records.CounterBatches},
		{"CounterClocks", records.CounterClocks},
		{"PruneCounts", records.PruneCounts},
		{"Streaks", records.Streaks},
		{"StreakBatches", records.StreakBatches},
		{"Audit", audit.Audit},
		{"Grants", records.Grants},
		{"RevokeGrant", records.RevokeGrant},
		{"ParkGranted", records.ParkGranted},
		{"Votes", func(t *testing.T, newStore func(*testing.T) store.Store) { votes.Votes(t, newStore, o.concurrency) }},
		{"Closed", interrupt.Closed},
		{"Cancelled", interrupt.Cancelled},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, newStore) })
	}
	t.Run("Concurrent", func(t *testing.T) { concurrent.Run(t, newStore, o.concurrency) })
	t.Run("Damage", func(t *testing.T) {
		if o.tamper == nil {
			t.Skip("the backend gave no audit tamper hook (WithAuditTamper): rows checked on read are not held")
		}
		damage.Run(t, newStore, o.tamper)
	})
}

// Ticket returns a valid new pending ticket in session and user whose
// effect is numbered n, created at a fixed time in 2026: tickets with
// different n have different digests. It is exported for benchmarks and
// backend-specific tests; use [TicketAt] for a ticket that deciding methods
// should accept.
func Ticket(session, user string, n int) store.Approval { return fixture.Ticket(session, user, n) }

// TicketAt is [Ticket] created at created and expiring ten minutes later.
func TicketAt(session, user string, n int, created time.Time) store.Approval {
	return fixture.TicketAt(session, user, n, created)
}

// Record returns an audit record of task at time at. It is exported for
// benchmarks and backend-specific tests.
func Record(task string, at time.Time) asuaudit.Record { return fixture.Record(task, at) }

// WatchAcross checks, for a backend implementing [store.Watcher], that a
// watch taken through first wakes when second, another handle on the same
// database (as another process's would be), changes the ticket.
func WatchAcross(t *testing.T, first, second store.Store) { tickets.WatchAcross(t, first, second) }
