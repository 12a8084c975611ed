package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/store"
)

// Show implements [store.Votes].
func (s *Store) Show(ctx context.Context, id string, at time.Time) (store.Approval, error) {
	if err := store.CheckTime(at); err != nil {
		return store.Approval{}, fmt.Errorf("show: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("show: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return store.Approval{}, fmt.Errorf("show: %w", store.ErrNotFound)
	}
	if t.ShownAt.IsZero() {
		t.ShownAt = at
	}
	return share(*t), nil
}

// Vote implements [store.Votes].
func (s *Store) Vote(ctx context.Context, id string, v store.Vote, quorum int, reason string, note store.Note) (store.Approval, error) {
	if err := store.CheckVote(v, quorum, reason); err != nil {
		return store.Approval{}, fmt.Errorf("vote: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("vote: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	switch {
	case !ok:
		return store.Approval{}, fmt.Errorf("vote: %w", store.ErrNotFound)
	case t.State != store.Pending:
		return store.Approval{}, fmt.Errorf("vote: %w", store.ErrResolved)
	}
	if err := s.skew(v.At); err != nil {
		return store.Approval{}, fmt.Errorf("vote: %w", err)
	}
	if !v.At.Before(t.ExpiresAt) {
		return store.Approval{}, fmt.Errorf("vote: %w", store.ErrExpired)
	}
	if slices.ContainsFunc(t.Votes, func(w store.Vote) bool { return w.Approver == v.Approver }) {
		return store.Approval{}, fmt.Errorf("vote: %w", store.ErrDuplicate)
	}
	next := share(*t)
	v.Evidence = append([]byte(nil), v.Evidence...)
	next.Votes = append(next.Votes, v)
	next.ShownAt = time.Time{} // the next approver is shown the card anew
	if len(next.Votes) >= quorum {
		next.ShownAt = t.ShownAt
		next.State = store.Approved
		next.Approver = v.Approver
		next.Reason = reason
		next.Evidence = nil
		next.ResolvedAt = v.At
	}
	recs, err := s.chain(noted(note, next, false))
	if err != nil {
		return store.Approval{}, fmt.Errorf("vote: %w", err)
	}
	if next.State != store.Pending {
		s.leavePending(t)
	}
	*t = next
	s.hub.Changed(t.ID)
	s.commit(recs)
	return share(*t), nil
}
