package memory

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/store"
)

// Reopen implements [store.Votes].
func (s *Store) Reopen(ctx context.Context, id string, l store.Lapse, note store.Note) (store.Approval, error) {
	if err := l.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("reopen: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("reopen: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return store.Approval{}, fmt.Errorf("reopen: %w", store.ErrNotFound)
	}
	if err := reopenable(*t, l); err != nil {
		return store.Approval{}, fmt.Errorf("reopen: %w", err)
	}
	if err := s.skew(l.At); err != nil {
		return store.Approval{}, fmt.Errorf("reopen: %w", err)
	}
	if !l.At.Before(t.ExpiresAt) {
		return store.Approval{}, fmt.Errorf("reopen: %w", store.ErrExpired)
	}
	next := store.Lapsed(*t, l)
	recs, err := s.chain(noted(note, next, false))
	if err != nil {
		return store.Approval{}, fmt.Errorf("reopen: %w", err)
	}
	*t = next
	index(s.bySession, t.Session, t)
	index(s.byUser, t.User, t)
	index(s.byMerge, mergeKey{t.Session, t.Digest}, t)
	s.hub.Changed(t.ID)
	s.commit(recs)
	return t.Clone(), nil
}

// reopenable says why ticket t cannot be reopened under l, or nil.
func reopenable(t store.Approval, l store.Lapse) error {
	switch t.State {
	case store.Executing, store.Done, store.Failed, store.Abandoned:
		return store.ErrConsumed
	case store.Revoked:
		return store.ErrRevoked
	case store.Approved:
		if len(t.Votes) > 0 && t.ResolvedAt.Equal(l.ApprovedAt) {
			return nil
		}
	}
	return store.ErrNotApproved
}
