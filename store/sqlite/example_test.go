package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
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
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	now, _ := s.Now(ctx)
	note := func(decision string) store.Note {
		return func(a store.Approval, merged bool) audit.Record {
			return audit.Record{TicketID: a.ID, Decision: decision}
		}
	}
	t, _, err := s.Park(ctx, storetest.TicketAt("session-1", "alice", 1, now), store.Caps{PerSession: 5}, note("park"))
	if err != nil {
		panic(err)
	}
	if _, err := s.Resolve(ctx, t.ID, store.Resolution{To: store.Approved, Approver: "alice", At: now}, note("approve")); err != nil {
		panic(err)
	}
	claim := store.Claim{Key: "step-1", Owner: "gate-1", At: now, LeaseUntil: now.Add(30 * time.Second)}
	t, err = s.Consume(ctx, t.ID, claim, note("consume"))
	fmt.Println(t.State, t.Fence, err)
	_, err = s.Consume(ctx, t.ID, claim, note("consume"))
	fmt.Println(err)
	head, _ := s.AuditHead(ctx)
	fmt.Println(head.Seq, head.Decision)
	// Output:
	// executing 1 <nil>
	// sqlite: consume: stepup: approval already used
	// 3 consume
}

// A ticket that needs two approvers: its card is shown, two people vote
// on it, and the second vote approves it in the same transaction.
func ExampleStore_Vote() {
	dir, err := os.MkdirTemp("", "asu")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	now, _ := s.Now(ctx)
	t, _, err := s.Park(ctx, storetest.TicketAt("session-1", "alice", 1, now), store.Caps{}, nil)
	if err != nil {
		panic(err)
	}
	if _, err := s.Show(ctx, t.ID, now); err != nil {
		panic(err)
	}
	note := func(a store.Approval, merged bool) audit.Record {
		return audit.Record{TicketID: a.ID, Decision: "vote", Reason: string(a.State)}
	}
	for _, who := range []string{"bob", "carol", "carol"} {
		_, _ = s.Show(ctx, t.ID, now) // each approver is shown the card
		got, err := s.Vote(ctx, t.ID, store.Vote{Approver: who, At: now}, 2, "two of finance", note)
		fmt.Println(who, got.State, len(got.Votes), err)
	}
	t, _ = s.Get(ctx, t.ID)
	fmt.Println(t.State, t.Approver, len(t.Votes), !t.ShownAt.IsZero())
	// Output:
	// bob pending 1 <nil>
	// carol approved 2 <nil>
	// carol  0 sqlite: vote: stepup: ticket already decided
	// approved carol 2 true
}

// A backup taken while the store serves, opened and checked.
func ExampleStore_Backup() {
	dir, err := os.MkdirTemp("", "asu")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if _, err := s.AppendAudit(ctx, audit.Record{Task: "t", Decision: audit.DecisionDeny, Reason: "unknown tool"}); err != nil {
		panic(err)
	}
	if err := s.Backup(ctx, filepath.Join(dir, "backup.db")); err != nil {
		panic(err)
	}
	fmt.Println(s.Backup(ctx, filepath.Join(dir, "backup.db")) != nil) // never overwrites

	b, err := sqlite.Open(ctx, filepath.Join(dir, "backup.db"), nil)
	if err != nil {
		panic(err)
	}
	defer b.Close()
	report, err := b.Check(ctx)
	fmt.Println(report.Records, report.Damaged(), err)
	// Output:
	// true
	// 1 false <nil>
}

// Check reads the whole file and reports damage an operator can act on.
func ExampleStore_Check() {
	dir, err := os.MkdirTemp("", "asu")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	report, err := s.Check(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Print(strings.ReplaceAll(report.Summary(), dir, "DIR"))
	// Output:
	// SQLite DIR/asu.db: 0 audit records (head seq 0), 0 tickets checked
	// intact: the audit chain verifies from its first record to its head
}

// An operator's look at a damaged file: Open refuses it, Inspect opens it
// read-only, and Check says what is damaged and what to do.
func ExampleOptions_inspect() {
	dir, err := os.MkdirTemp("", "asu")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "asu.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		panic(err)
	}
	for range 3 {
		if _, err := s.AppendAudit(ctx, audit.Record{Task: "t", Decision: audit.DecisionDeny, Reason: "unknown tool"}); err != nil {
			panic(err)
		}
	}
	s.Close()
	// Someone edits a row behind the store's back.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		panic(err)
	}
	if _, err := db.Exec(`UPDATE audit SET body = replace(body, 'unknown', 'known') WHERE seq = 2`); err != nil {
		panic(err)
	}
	db.Close()

	_, err = sqlite.Open(ctx, path, nil)
	fmt.Println(errors.Is(err, store.ErrCorrupt))
	in, err := sqlite.Open(ctx, path, &sqlite.Options{Inspect: true})
	if err != nil {
		panic(err)
	}
	defer in.Close()
	report, _ := in.Check(ctx)
	fmt.Println(report.Problems[0].Table, report.Problems[0].FromSeq, report.Problems[0].What)
	// Output:
	// true
	// audit 2 content does not match its hash
}
