package plug

import "time"

// MarkPoint is a point of a store's history: its audit chain's length and
// head hash, and its clock.
type MarkPoint struct {
	Seq  int64
	Head string // hex SHA-256 of the head row
	Time time.Time
}

// Held is a ticket an operator's reconcile took out of use because it may
// have run before the store went back: it was pending, approved or
// executing at a time the store had already passed once.
type Held struct {
	Ticket string
	Tool   string
	Was    string // the state it was found in: pending, approved or executing
	Key    string // the idempotency key any run of it carried
	Ran    bool   // the watermark saw a run of it start
}

// Run is a run the watermark saw start that the store does not show as
// run: the store lost it with the rollback. Its tool may have acted.
type Run struct {
	Ticket string
	Key    string // the idempotency key the executor saw
	At     time.Time
	Shown  string // the ticket's state in the store now, or "missing"
}

// Reconciliation is what an operator's reconcile found and did.
type Reconciliation struct {
	Found  string    // the rollback, in words; empty when the store was not behind
	Store  MarkPoint // the store as found
	Marked MarkPoint // the watermark it was found behind
	Held   []Held    // tickets taken out of use, each with its audit row
	Lost   []Run     // runs the store no longer records
}
