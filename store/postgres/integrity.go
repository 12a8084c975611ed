package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// Check implements [store.Checker]: the audit chain from its first record
// to its head, read in seq order and verified record by record (its hash,
// its link to the one before, missing rows), the chain head row against
// the last record, and every ticket row (it parses, its state is one a
// ticket takes, its effect hashes to its digest). It reads the whole
// audit and tickets tables, as one snapshot, in time linear in their
// size. PostgreSQL's own page checksums (initdb --data-checksums) and
// amcheck cover the files beneath; this check covers what the store
// wrote. A damaged store refuses to decide from then on.
func (s *Store) Check(ctx context.Context) (store.Report, error) {
	const op = "check"
	if err := s.enterRead(ctx); err != nil {
		return store.Report{}, s.fail(ctx, op, err)
	}
	r := store.Report{Backend: "PostgreSQL"}
	if s.schema != "" {
		r.Backend += " schema " + s.schema
	}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			if err := checkChain(ctx, tx, &r); err != nil {
				return err
			}
			return checkTickets(ctx, tx, &r)
		})
	if err != nil {
		if errors.Is(err, errUnreadable) {
			r.Add(store.Problem{Table: "database", What: err.Error()})
		} else {
			return store.Report{}, s.failed(ctx, op, err)
		}
	}
	if r.Damaged() {
		_ = s.damage.Note(fmt.Errorf("%w: the integrity check found %d problems", store.ErrCorrupt, len(r.Problems)))
	}
	return r, nil
}

// checkHeadAtOpen checks the chain head and the record before it, so a
// store opened on a chain whose head is damaged refuses to decide from
// the start instead of at its first append. A check that cannot run
// leaves that to the first append.
func (s *Store) checkHeadAtOpen(ctx context.Context) {
	rows, err := s.pool.Query(ctx, `SELECT `+auditColumns+` FROM audit ORDER BY seq DESC LIMIT 2`)
	if err != nil {
		return
	}
	recs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.Record, error) { return scanAudit(r) })
	if err != nil || len(recs) == 0 {
		return
	}
	var prev *audit.Record
	if len(recs) == 2 {
		prev = &recs[1]
	}
	_ = s.damage.Note(store.CheckHead(recs[0], prev, recs[0].Seq))
}

// errUnreadable marks a table the check could not read to its end: damage
// the database reported, not a check that could not run.
var errUnreadable = errors.New("a table cannot be read to its end")

func checkChain(ctx context.Context, tx pgx.Tx, r *store.Report) error {
	c := store.NewChainCheck(r)
	rows, err := tx.Query(ctx, `SELECT `+auditColumns+` FROM audit ORDER BY seq`)
	if err != nil {
		return err
	}
	for rows.Next() {
		rec, err := scanAudit(rows)
		if err != nil {
			c.Unreadable(r.HeadSeq+1, "the row cannot be read")
			continue
		}
		c.Record(rec)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return readErr(err)
	}
	var (
		seq  int64
		hash []byte
	)
	if err := tx.QueryRow(ctx, `SELECT seq, hash FROM audit_head`).Scan(&seq, &hash); err != nil {
		return readErr(err)
	}
	var want canon.Digest
	copy(want[:], hash)
	switch {
	case seq != r.HeadSeq:
		r.Add(store.Problem{Table: "audit_head", What: fmt.Sprintf("the chain head is seq %d, the last record is seq %d", seq, r.HeadSeq)})
	case seq != 0 && want.String() != r.HeadHash:
		r.Add(store.Problem{Table: "audit_head", What: fmt.Sprintf("the chain head's hash differs from record %d's", seq)})
	}
	return nil
}

func checkTickets(ctx context.Context, tx pgx.Tx, r *store.Report) error {
	rows, err := tx.Query(ctx, `SELECT `+ticketColumns+` FROM tickets ORDER BY created_at, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r.Tickets++
		a, err := scanTicket(rows)
		switch {
		case err != nil:
			r.Add(store.Problem{Table: "tickets", Key: a.ID, What: "the row does not parse"})
		case !validState(a.State):
			r.Add(store.Problem{Table: "tickets", Key: a.ID, What: "its state is not one a ticket takes"})
		case !canon.Sum(a.Effect).Equal(a.Digest):
			r.Add(store.Problem{Table: "tickets", Key: a.ID, What: "its effect does not match its digest"})
		}
	}
	return readErr(rows.Err())
}

// readErr marks err, from reading a table, as damage when the database
// says the data is corrupted.
func readErr(err error) error {
	if err == nil {
		return nil
	}
	var pgErr interface{ SQLState() string }
	if errors.As(err, &pgErr) && (pgErr.SQLState() == "XX001" || pgErr.SQLState() == "XX002") {
		return fmt.Errorf("%w: SQLSTATE %s", errUnreadable, pgErr.SQLState())
	}
	return err
}

// validState reports whether st is a state a stored ticket can be in.
func validState(st store.State) bool {
	switch st {
	case store.Pending, store.Approved, store.Denied, store.Expired, store.Cancelled, store.Revoked,
		store.Executing, store.Done, store.Failed, store.Abandoned:
		return true
	}
	return false
}
