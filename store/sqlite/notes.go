package sqlite

import (
	"context"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// note appends the record note makes of a (as stored, merged or not) to
// the chain, inside tx: the decision and its row commit together. A nil
// note appends nothing; a record the chain refuses fails the transaction.
func (s *Store) note(ctx context.Context, tx runner, note store.Note, a store.Approval, merged bool) error {
	if note == nil {
		return nil
	}
	_, err := s.appendRecord(ctx, tx, note(a.Clone(), merged))
	return err
}

// appendRecord chains r after the head and inserts it, inside tx, stamped
// with the store's clock.
func (s *Store) appendRecord(ctx context.Context, tx runner, r audit.Record) (audit.Record, error) {
	// BEGIN IMMEDIATE holds the write lock from the start of tx to its
	// commit, so no other writer reads the same head.
	head, err := auditHead(ctx, tx, true)
	if err != nil {
		return audit.Record{}, err
	}
	out, err := store.ChainNext(head, r, s.clock())
	if err != nil {
		return audit.Record{}, err
	}
	body, err := encodeRecord(out)
	if err != nil {
		return audit.Record{}, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit (seq, time, task, hash, body) VALUES (?, ?, ?, ?, ?)`,
		out.Seq, out.Time, out.Task, out.Hash[:], body)
	return out, dbErr(err)
}

// skew refuses at when it is off the store's clock, read now, inside the
// deciding transaction, by more than store.MaxSkew.
func (s *Store) skew(at time.Time) error {
	return store.CheckSkew(at, s.clock())
}
