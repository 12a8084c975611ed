package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
)

// Open a store shared by every gate replica, park a ticket, approve it
// and spend it once, each decision with its audit row. Every time is read
// from the database's clock, the one all replicas share. A second consume,
// from this replica or any other, is refused.
func ExampleOpen() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Getenv("ASU_POSTGRES_DSN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	note := func(decision string) store.Note {
		return func(a store.Approval, _ bool) audit.Record {
			return audit.Record{TicketID: a.ID, Session: a.Session, Decision: decision}
		}
	}

	now, err := s.Now(ctx)
	if err != nil {
		log.Fatal(err)
	}
	t, _, err := s.Park(ctx, storetest.TicketAt("session-1", "alice", 1, now), store.Caps{PerSession: 10, PerUser: 50},
		note(audit.DecisionNeedsApproval))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := s.Resolve(ctx, t.ID, store.Resolution{To: store.Approved, Approver: "alice", At: now},
		note("approved")); err != nil {
		log.Fatal(err)
	}
	claim := store.Claim{Key: "idem-" + t.ID, Owner: "gate-a", At: now, LeaseUntil: now.Add(30 * time.Second)}
	if _, err := s.Consume(ctx, t.ID, claim, note("executing")); err != nil {
		log.Fatal(err)
	}
	claim.Owner = "gate-b"
	_, err = s.Consume(ctx, t.ID, claim, note("executing"))
	fmt.Println(errors.Is(err, store.ErrConsumed))
}

// Deployments that migrate in a step of their own open the gate's stores
// with SkipMigrate, which refuses a schema that is not at this build's
// version, and run Migrate once from the deploy job.
func ExampleStore_Migrate() {
	ctx := context.Background()
	dsn := os.Getenv("ASU_POSTGRES_DSN")

	deploy, err := postgres.Open(ctx, dsn, &postgres.Options{SkipMigrate: true, MaxConns: 1})
	if errors.Is(err, postgres.ErrSchemaVersion) {
		deploy, err = postgres.Open(ctx, dsn, nil) // migrates
	}
	if err != nil {
		log.Fatal(err)
	}
	defer deploy.Close()
	if err := deploy.Migrate(ctx); err != nil { // idempotent
		log.Fatal(err)
	}
}

// A replica that crashed while its executor ran leaves the ticket
// executing under a lease it no longer renews. Any other replica lists
// the lapsed leases (by the database's clock) and reclaims them: the
// reclaim fences the crashed owner off, and the executor runs again with
// the ticket's one idempotency key. A live lease is never taken over.
func ExampleStore_Reclaim() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Getenv("ASU_POSTGRES_DSN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	now, err := s.Now(ctx)
	if err != nil {
		log.Fatal(err)
	}
	lapsed, err := s.Expired(ctx, now, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range lapsed {
		claim := store.Claim{Owner: "gate-b", At: now, LeaseUntil: now.Add(30 * time.Second)}
		t, err := s.Reclaim(ctx, t.ID, t.Fence, claim, func(a store.Approval, _ bool) audit.Record {
			return audit.Record{TicketID: a.ID, Decision: "reclaimed", IdempotencyKey: a.IdempotencyKey}
		})
		if errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrLeaseLive) {
			continue // another replica was first, or the owner renewed
		}
		if err != nil {
			log.Fatal(err)
		}
		// Run t's stored effect with t.IdempotencyKey, renewing the lease
		// with s.Renew(ctx, t.ID, "gate-b", t.Fence, ...) while it runs,
		// then record the outcome with s.Finish(ctx, t.ID, t.Fence, ...).
		_ = t
	}
}

// A ticket that needs two approvers, whichever replicas they reach: the
// card is shown, two people approve, and the second vote approves the
// ticket in the same transaction as its audit row. The same person voting
// again, from any replica, is refused.
func ExampleStore_Vote() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Getenv("ASU_POSTGRES_DSN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	note := func(a store.Approval, _ bool) audit.Record {
		return audit.Record{TicketID: a.ID, Session: a.Session, Decision: "vote", Reason: string(a.State)}
	}

	now, err := s.Now(ctx)
	if err != nil {
		log.Fatal(err)
	}
	t, _, err := s.Park(ctx, storetest.TicketAt("session-1", "alice", 2, now), store.Caps{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := s.Show(ctx, t.ID, now); err != nil {
		log.Fatal(err)
	}
	for _, who := range []string{"bob", "carol"} {
		if t, err = s.Vote(ctx, t.ID, store.Vote{Approver: who, At: now}, 2, "two of finance", note); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(t.State, t.Approver, len(t.Votes))
	_, err = s.Vote(ctx, t.ID, store.Vote{Approver: "carol", At: now}, 2, "two of finance", note)
	fmt.Println(errors.Is(err, store.ErrResolved))
}

// Durability says what the database promises about an acknowledged
// commit; a logger in the options hears a warning when commits are off.
func ExampleStore_Durability() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Getenv("ASU_POSTGRES_DSN"), &postgres.Options{Logger: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	d := s.Durability()
	fmt.Println(d.SynchronousCommit, d.WaitsForStandby(), d.Risk())
}

// Check verifies the whole chain, the chain head and every ticket row.
func ExampleStore_Check() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Getenv("ASU_POSTGRES_DSN"), &postgres.Options{SkipMigrate: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	report, err := s.Check(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(report.Summary())
}
