package memory

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// Check implements [store.Checker]: the audit chain from its first record
// to its head, and every ticket's effect against its digest. Memory has no
// pages to rot, so what it can find is what a caller changed behind the
// store's back (tests do, through a hook). A damaged store refuses to
// decide from then on.
func (s *Store) Check(ctx context.Context) (store.Report, error) {
	if err := s.lockRead(ctx); err != nil {
		return store.Report{}, fmt.Errorf("check: %w", err)
	}
	defer s.mu.Unlock()
	r := store.Report{Backend: "memory"}
	c := store.NewChainCheck(&r)
	for i := range s.audit.len() {
		c.Record(*s.audit.at(i))
	}
	for _, a := range s.byCreated {
		r.Tickets++
		if !canon.Sum(a.Effect).Equal(a.Digest) {
			r.Add(store.Problem{Table: "approvals", Key: a.ID, What: "its effect does not match its digest"})
		}
	}
	if r.Damaged() {
		_ = s.damage.Note(fmt.Errorf("%w: the integrity check found %d problems", store.ErrCorrupt, len(r.Problems)))
	}
	return r, nil
}

// tamperAudit replaces the stored audit record r.Seq with r as given,
// bypassing every check: the damage a test needs to show that reads,
// appends and Check detect it.
func (s *Store) tamperAudit(r audit.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Seq >= 1 && r.Seq <= int64(s.audit.len()) {
		*s.audit.at(int(r.Seq - 1)) = cloneRecord(r)
	}
}
