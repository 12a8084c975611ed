package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/store"
)

// Consume implements [store.Execution].
func (s *Store) Consume(ctx context.Context, id string, c store.Claim, note store.Note) (store.Approval, error) {
	if err := store.CheckConsume(c); err != nil {
		return store.Approval{}, fmt.Errorf("consume: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("consume: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrNotFound)
	}
	if err := s.skew(c.At); err != nil {
		return store.Approval{}, fmt.Errorf("consume: %w", err)
	}
	switch {
	case t.State == store.Executing || t.State.Ran():
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrConsumed)
	case t.State == store.Revoked:
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrRevoked)
	case t.State != store.Approved:
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrNotApproved)
	case !c.At.Before(t.ExpiresAt):
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrExpired)
	}
	next := share(*t)
	next.State = store.Executing
	next.IdempotencyKey = c.Key
	next.ConsumedAt = c.At
	next.Owner = c.Owner
	next.Fence = 1
	next.LeaseUntil = c.LeaseUntil
	recs, err := s.chain(noted(note, next, false))
	if err != nil {
		return store.Approval{}, fmt.Errorf("consume: %w", err)
	}
	*t = next
	s.hub.Changed(t.ID)
	s.executing[t.ID] = t
	s.commit(recs)
	return share(*t), nil
}

// Renew implements [store.Execution].
func (s *Store) Renew(ctx context.Context, id, owner string, fence int64, until time.Time) error {
	if err := store.CheckLease(owner, fence, until); err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	switch {
	case !ok:
		return fmt.Errorf("renew: %w", store.ErrNotFound)
	case t.State != store.Executing || t.Owner != owner || t.Fence != fence:
		return fmt.Errorf("renew: %w", store.ErrFenced)
	}
	t.LeaseUntil = until
	return nil
}

// Finish implements [store.Execution].
func (s *Store) Finish(ctx context.Context, id string, fence int64, o store.Outcome, note store.Note) (store.Approval, error) {
	if err := o.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("finish: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("finish: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	switch {
	case !ok:
		return store.Approval{}, fmt.Errorf("finish: %w", store.ErrNotFound)
	case t.State != store.Executing || t.Fence != fence:
		return store.Approval{}, fmt.Errorf("finish: %w", store.ErrFenced)
	}
	next := share(*t)
	next.State = o.State
	next.Result = append([]byte{}, o.Result...)
	next.FinishedAt = o.At
	recs, err := s.chain(noted(note, next, false))
	if err != nil {
		return store.Approval{}, fmt.Errorf("finish: %w", err)
	}
	*t = next
	s.hub.Changed(t.ID)
	delete(s.executing, t.ID)
	s.commit(recs)
	return share(*t), nil
}

// Expired implements [store.Execution].
func (s *Store) Expired(ctx context.Context, at time.Time, limit int) ([]store.Approval, error) {
	if limit < 0 {
		return nil, fmt.Errorf("expired: %w: negative limit", store.ErrInvalid)
	}
	if err := s.lockRead(ctx); err != nil {
		return nil, fmt.Errorf("expired: %w", err)
	}
	defer s.mu.Unlock()
	var due []*store.Approval
	for _, t := range s.executing {
		if !t.LeaseUntil.After(at) {
			due = append(due, t)
		}
	}
	slices.SortFunc(due, byTime(func(a *store.Approval) time.Time { return a.LeaseUntil }))
	due = due[:min(len(due), store.Filter{Limit: limit}.PageSize())]
	out := make([]store.Approval, len(due))
	for i, t := range due {
		out[i] = share(*t)
	}
	return out, nil
}

// Reclaim implements [store.Execution].
func (s *Store) Reclaim(ctx context.Context, id string, fence int64, c store.Claim, note store.Note) (store.Approval, error) {
	if err := c.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("reclaim: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("reclaim: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return store.Approval{}, fmt.Errorf("reclaim: %w", store.ErrNotFound)
	}
	if err := s.skew(c.At); err != nil {
		return store.Approval{}, fmt.Errorf("reclaim: %w", err)
	}
	switch {
	case t.State != store.Executing || t.Fence != fence:
		return store.Approval{}, fmt.Errorf("reclaim: %w", store.ErrFenced)
	case c.Key != "" && c.Key != t.IdempotencyKey:
		return store.Approval{}, fmt.Errorf("reclaim: %w: the idempotency key never changes", store.ErrInvalid)
	case t.LeaseUntil.After(c.At):
		return store.Approval{}, fmt.Errorf("reclaim: %w", store.ErrLeaseLive)
	}
	next := share(*t)
	next.Owner = c.Owner
	next.Fence++
	next.LeaseUntil = c.LeaseUntil
	recs, err := s.chain(noted(note, next, false))
	if err != nil {
		return store.Approval{}, fmt.Errorf("reclaim: %w", err)
	}
	*t = next
	s.hub.Changed(t.ID)
	s.commit(recs)
	return share(*t), nil
}
