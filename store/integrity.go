package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	asuaudit "github.com/agentstepup/asu/audit"
)

// A store reads back what it wrote, so a record that does not match its
// own hash, or does not link to the record before it, was changed behind
// the store's back: bit rot, a damaged file, a writer that bypassed it.
// Backends check every audit record they read with [CheckRead] (and the
// head an append links to with [CheckHead]), and once they have seen
// damage they refuse to decide ([Damage]): a gate whose evidence cannot be
// read back must not keep approving and running calls.

// CheckRecord checks r against its own hash (r.Hash is
// [asuaudit.Record.ComputeHash] of r) and, when prev is not nil, its
// link to prev: Seq one more and PrevHash prev's Hash. It returns nil or
// an error wrapping [ErrCorrupt] that names r's Seq.
func CheckRecord(r asuaudit.Record, prev *asuaudit.Record) error {
	h, err := r.ComputeHash()
	switch {
	case err != nil:
		return corruptSeq(r.Seq, "its text cannot be hashed")
	case !h.Equal(r.Hash):
		return corruptSeq(r.Seq, "its content does not match its hash")
	case prev != nil && r.Seq != prev.Seq+1:
		return corruptSeq(r.Seq, fmt.Sprintf("it follows seq %d", prev.Seq))
	case prev != nil && !r.PrevHash.Equal(prev.Hash):
		return corruptSeq(r.Seq, fmt.Sprintf("its prev_hash does not match the hash of seq %d", prev.Seq))
	}
	return nil
}

// CheckRead checks records a store read, in the order read: each against
// its own hash, and each whose Seq follows the one before it in records
// against that record's Hash ([CheckRecord]). A backend calls it on every
// read of the audit chain before returning the records.
func CheckRead(records []asuaudit.Record) error {
	for i := range records {
		var prev *asuaudit.Record
		if i > 0 && records[i].Seq == records[i-1].Seq+1 {
			prev = &records[i-1]
		}
		if err := CheckRecord(records[i], prev); err != nil {
			return err
		}
	}
	return nil
}

// CheckHead checks the head an append is about to link to, as the store
// read it: it is the record at seq (the head a backend keeps apart from
// the rows, or the row's own key), its hash is its content's, and it links
// to prev, the record before it, when the backend read that too (nil
// otherwise; the first record links to nothing). The zero record of an
// empty chain passes when seq is 0.
func CheckHead(head asuaudit.Record, prev *asuaudit.Record, seq int64) error {
	if head.Seq == 0 && head.Hash.IsZero() && seq == 0 {
		return nil
	}
	if head.Seq != seq {
		return corruptSeq(seq, fmt.Sprintf("the row read as the chain's head holds seq %d", head.Seq))
	}
	if head.Seq == 1 && !head.PrevHash.IsZero() {
		return corruptSeq(seq, "the first record links to a record before it")
	}
	return CheckRecord(head, prev)
}

// CorruptRow returns an error wrapping [ErrCorrupt] for a stored row of
// table, named by key (a ticket id, an audit seq), that cannot be parsed:
// why says what is wrong, never what the row holds.
func CorruptRow(table, key, why string) error {
	return fmt.Errorf("%w: %s row %s: %s", ErrCorrupt, table, key, why)
}

func corruptSeq(seq int64, why string) error {
	return fmt.Errorf("%w: audit seq %d: %s", ErrCorrupt, seq, why)
}

// Damage remembers the first damage a store detected and refuses every
// deciding call after it, until the store is reopened: a store that
// cannot read its own audit chain refuses to decide. The zero value is an
// undamaged store's. It is safe for concurrent use.
type Damage struct {
	first atomic.Pointer[damaged]
}

type damaged struct{ err error }

// Note remembers err when it wraps [ErrCorrupt] and is the first such, and
// returns err unchanged, so backends pass every error they return
// through it.
func (d *Damage) Note(err error) error {
	if err != nil && errors.Is(err, ErrCorrupt) {
		d.first.CompareAndSwap(nil, &damaged{err: err})
	}
	return err
}

// Err returns nil for an undamaged store and otherwise an error wrapping
// [ErrCorrupt] that names the first damage seen. Backends call it before
// every deciding call and refuse with it.
func (d *Damage) Err() error {
	if p := d.first.Load(); p != nil {
		return fmt.Errorf("%w: refusing to decide until an operator checks and restores the store (first damage: %v)",
			ErrCorrupt, strings.TrimPrefix(p.err.Error(), ErrCorrupt.Error()+": "))
	}
	return nil
}

// Checker is implemented by stores that can check themselves end to end:
// the audit chain from its first record to its head, the rows that must
// parse, and, where the backend has one, the database's own check of its
// files. Detect it with a type assertion:
//
//	if c, ok := st.(store.Checker); ok { report, err := c.Check(ctx) ... }
type Checker interface {
	// Check reads the whole store and reports what is damaged. The error
	// is for a check that could not run (a closed store, a cancelled
	// context); damage is in the [Report]. A store whose Check finds
	// damage refuses to decide from then on, as after any damage it
	// detects.
	Check(ctx context.Context) (Report, error)
}

// Report is what [Checker.Check] found.
type Report struct {
	// Backend names the store checked, e.g. "SQLite asu.db".
	Backend string `json:"backend"`
	// Records is how many audit records were read and verified.
	Records int64 `json:"records"`
	// HeadSeq and HeadHash (hex) are the seq and hash of the last audit
	// record read, zero and empty for an empty chain.
	HeadSeq  int64  `json:"head_seq"`
	HeadHash string `json:"head_hash"`
	// Tickets is how many ticket rows were read.
	Tickets int64 `json:"tickets"`
	// Problems lists the damage found, at most [MaxProblems] of them;
	// Truncated says more were found.
	Problems  []Problem `json:"problems"`
	Truncated bool      `json:"truncated"`
}

// MaxProblems bounds the problems a [Report] lists, so checking a badly
// damaged store takes bounded memory.
const MaxProblems = 100

// Problem is one damage [Checker.Check] found.
type Problem struct {
	// Table is where the damage is: "audit", "approvals", ..., or "file"
	// for the database's own check of its pages.
	Table string `json:"table"`
	// FromSeq and ToSeq, for the audit table, are the damaged run of
	// sequence numbers, both included; zero otherwise.
	FromSeq int64 `json:"from_seq,omitempty"`
	ToSeq   int64 `json:"to_seq,omitempty"`
	// Key names the damaged row of another table (a ticket id).
	Key string `json:"key,omitempty"`
	// What says what is wrong, never what the row holds.
	What string `json:"what"`
}

// Damaged reports whether the check found any damage.
func (r Report) Damaged() bool { return len(r.Problems) > 0 || r.Truncated }

// Add appends p, merging an audit problem into the one before it when it
// has the same What and starts at the next seq, and counting past
// [MaxProblems] as Truncated.
func (r *Report) Add(p Problem) {
	if n := len(r.Problems); n > 0 && p.Table == "audit" && p.FromSeq != 0 {
		last := &r.Problems[n-1]
		if last.Table == "audit" && last.What == p.What && last.ToSeq+1 == p.FromSeq {
			last.ToSeq = p.ToSeq
			return
		}
	}
	if len(r.Problems) >= MaxProblems {
		r.Truncated = true
		return
	}
	r.Problems = append(r.Problems, p)
}

// Summary is the report as text an operator can act on: what was
// checked, each damage and where it is, and what to do.
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d audit records (head seq %d), %d tickets checked\n", r.Backend, r.Records, r.HeadSeq, r.Tickets)
	if !r.Damaged() {
		b.WriteString("intact: the audit chain verifies from its first record to its head\n")
		return b.String()
	}
	fmt.Fprintf(&b, "DAMAGED: %d problems\n", len(r.Problems))
	audit, file := false, false
	for _, p := range r.Problems {
		switch {
		case p.FromSeq != 0 && p.FromSeq == p.ToSeq:
			fmt.Fprintf(&b, "  %s seq %d: %s\n", p.Table, p.FromSeq, p.What)
		case p.FromSeq != 0:
			fmt.Fprintf(&b, "  %s seq %d-%d: %s\n", p.Table, p.FromSeq, p.ToSeq, p.What)
		case p.Key != "":
			fmt.Fprintf(&b, "  %s row %s: %s\n", p.Table, p.Key, p.What)
		default:
			fmt.Fprintf(&b, "  %s: %s\n", p.Table, p.What)
		}
		audit = audit || p.Table == "audit"
		file = file || p.Table == "file"
	}
	if r.Truncated {
		fmt.Fprintf(&b, "  ... more problems than the %d listed\n", MaxProblems)
	}
	b.WriteString("what to do:\n")
	b.WriteString("  - the store refuses to decide: stop the service, keep this copy for inspection, restore the newest backup whose check is intact\n")
	if audit {
		b.WriteString("  - audit records in the ranges above cannot be trusted as evidence; compare them with an exported chain or a signed checkpoint\n")
	}
	if file {
		b.WriteString("  - the database reports damaged pages: check the disk; rows outside the audit may be lost too\n")
	}
	b.WriteString("  - after a restore, reconcile the tickets that may have run since the backup before the gate decides again\n")
	return b.String()
}

// ChainCheck verifies a whole audit chain record by record, from seq 1 to
// the head, in memory that does not grow with the chain, adding what it
// finds to a [Report]: [Checker] implementations feed it every row in
// seq order. The cost is one hash per record, linear in the chain.
type ChainCheck struct {
	report *Report
	prev   asuaudit.Record
	linked bool // prev is the record at next-1 and was readable
	next   int64
}

// NewChainCheck returns a check that adds to r.
func NewChainCheck(r *Report) *ChainCheck { return &ChainCheck{report: r, next: 1} }

// Record checks rec, the next record read: its seq follows the last one,
// its hash is its content's and its prev_hash links to the record before.
func (c *ChainCheck) Record(rec asuaudit.Record) {
	c.seq(rec.Seq)
	c.report.Records++
	bad := func(what string) { c.report.Add(Problem{Table: "audit", FromSeq: rec.Seq, ToSeq: rec.Seq, What: what}) }
	if h, err := rec.ComputeHash(); err != nil || !h.Equal(rec.Hash) {
		bad("content does not match its hash")
	}
	switch {
	case rec.Seq == 1 && !rec.PrevHash.IsZero():
		bad("the first record links to a record before it")
	case c.linked && !rec.PrevHash.Equal(c.prev.Hash):
		bad("prev_hash does not match the record before")
	}
	c.prev, c.linked = rec, true
	c.report.HeadSeq, c.report.HeadHash = rec.Seq, rec.Hash.String()
}

// Unreadable records that the row at seq exists but cannot be parsed
// (why says how, never what it holds).
func (c *ChainCheck) Unreadable(seq int64, why string) {
	c.seq(seq)
	c.report.Records++
	c.report.Add(Problem{Table: "audit", FromSeq: seq, ToSeq: seq, What: why})
	c.linked = false
	c.report.HeadSeq, c.report.HeadHash = seq, ""
}

// seq accounts for seq, the next row's: rows missing before it, or a
// seq that goes backwards.
func (c *ChainCheck) seq(seq int64) {
	switch {
	case seq > c.next:
		c.report.Add(Problem{Table: "audit", FromSeq: c.next, ToSeq: seq - 1, What: "records are missing"})
		c.linked = false
	case seq < c.next:
		c.report.Add(Problem{Table: "audit", FromSeq: seq, ToSeq: seq, What: fmt.Sprintf("out of order after seq %d", c.next-1)})
		c.linked = false
	}
	c.next = seq + 1
}
