package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// A backend checks every record it reads back before returning it.
func ExampleCheckRead() {
	chain := audittest.Chain(3, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	fmt.Println(store.CheckRead(chain))
	chain[1].Reason = "rewritten by someone else"
	err := store.CheckRead(chain)
	fmt.Println(errors.Is(err, store.ErrCorrupt), err)
	// Output:
	// <nil>
	// true store: stored records are damaged: audit seq 2: its content does not match its hash
}

// CheckRecord checks one record, and its link when the one before is at
// hand.
func ExampleCheckRecord() {
	chain := audittest.Chain(3, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	fmt.Println(store.CheckRecord(chain[2], &chain[1]))
	fmt.Println(store.CheckRecord(chain[2], &chain[0]))
	// Output:
	// <nil>
	// store: stored records are damaged: audit seq 3: it follows seq 1
}

// An append checks the head it links to, and the record before it.
func ExampleCheckHead() {
	chain := audittest.Chain(2, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	fmt.Println(store.CheckHead(chain[1], &chain[0], 2))
	fmt.Println(store.CheckHead(chain[0], nil, 2))
	// Output:
	// <nil>
	// store: stored records are damaged: audit seq 2: the row read as the chain's head holds seq 1
}

// A row of another table that does not parse is damage too, named by its
// key, never by what it holds.
func ExampleCorruptRow() {
	err := store.CorruptRow("approvals", "t-17", "the taint does not parse")
	fmt.Println(errors.Is(err, store.ErrCorrupt), err)
	// Output:
	// true store: stored records are damaged: approvals row t-17: the taint does not parse
}

// A backend passes its errors through Damage.Note and refuses every
// deciding call once Damage.Err is set.
func ExampleDamage() {
	var d store.Damage
	decide := func() error {
		if err := d.Err(); err != nil {
			return err
		}
		return nil // ... the decision
	}
	fmt.Println(decide())
	_ = d.Note(store.CorruptRow("audit", "12", "the record does not parse"))
	fmt.Println(decide())
	// Output:
	// <nil>
	// store: stored records are damaged: refusing to decide until an operator checks and restores the store (first damage: audit row 12: the record does not parse)
}

// A store that implements Checker checks itself end to end.
func ExampleChecker() {
	var s store.Store = memory.New(nil)
	defer s.Close()
	ctx := context.Background()
	_, _ = s.AppendAudit(ctx, audit.Record{Task: "t", Decision: audit.DecisionDeny, Reason: "unknown tool"})
	if c, ok := s.(store.Checker); ok {
		report, err := c.Check(ctx)
		fmt.Println(report.Records, report.Damaged(), err)
	}
	// Output:
	// 1 false <nil>
}

// A Checker feeds every record, in seq order, to a ChainCheck.
func ExampleNewChainCheck() {
	chain := audittest.Chain(6, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	chain[3].Reason = "edited"
	report := store.Report{Backend: "example"}
	c := store.NewChainCheck(&report)
	for i, r := range chain {
		if i == 1 {
			continue // a row lost
		}
		c.Record(r)
	}
	fmt.Print(report.Summary())
	// Output:
	// example: 5 audit records (head seq 6), 0 tickets checked
	// DAMAGED: 2 problems
	//   audit seq 2: records are missing
	//   audit seq 4: content does not match its hash
	// what to do:
	//   - the store refuses to decide: stop the service, keep this copy for inspection, restore the newest backup whose check is intact
	//   - audit records in the ranges above cannot be trusted as evidence; compare them with an exported chain or a signed checkpoint
	//   - after a restore, reconcile the tickets that may have run since the backup before the gate decides again
}

// Report.Add merges a run of one damage into one problem.
func ExampleReport_Add() {
	var r store.Report
	for seq := int64(3); seq <= 7; seq++ {
		r.Add(store.Problem{Table: "audit", FromSeq: seq, ToSeq: seq, What: "content does not match its hash"})
	}
	fmt.Printf("%d %+v\n", len(r.Problems), r.Problems[0])
	// Output:
	// 1 {Table:audit FromSeq:3 ToSeq:7 Key: What:content does not match its hash}
}
