package memory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/agentstepup/asu/store"
)

// Consume implements [store.Execution].
func (s *Store) Consume(ctx context.Context, id, key string, at time.Time) (store.Approval, error) {
	if err := store.CheckConsume(key, at); err != nil {
		return store.Approval{}, fmt.Errorf("consume: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("consume: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	switch {
	case !ok:
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrNotFound)
	case t.State == store.Executing || t.State == store.Done:
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrConsumed)
	case t.State != store.Approved:
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrNotApproved)
	case !at.Before(t.ExpiresAt):
		return store.Approval{}, fmt.Errorf("consume: %w", store.ErrExpired)
	}
	t.State = store.Executing
	t.IdempotencyKey = key
	t.ConsumedAt = at
	return t.Clone(), nil
}

// Finish implements [store.Execution].
func (s *Store) Finish(ctx context.Context, id string, result []byte, at time.Time) (store.Approval, error) {
	if err := store.CheckFinish(result, at); err != nil {
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
	case t.State != store.Executing:
		return store.Approval{}, fmt.Errorf("finish: %w", store.ErrNotExecuting)
	}
	t.State = store.Done
	t.Result = append([]byte{}, result...)
	t.FinishedAt = at
	return t.Clone(), nil
}

// Recover implements [store.Execution].
func (s *Store) Recover(ctx context.Context) ([]store.Approval, error) {
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	defer s.mu.Unlock()
	var out []store.Approval
	for _, t := range s.tickets {
		if t.State == store.Executing {
			out = append(out, t.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ConsumedAt.Equal(out[j].ConsumedAt) {
			return out[i].ConsumedAt.Before(out[j].ConsumedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
