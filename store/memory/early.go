package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// MarkEarly implements [store.Early]. The marks live as long as the
// store: a ticket's are at most [store.MaxEarly].
func (s *Store) MarkEarly(ctx context.Context, id string, key [32]byte, until time.Time) error {
	if err := store.CheckEarly(id, until); err != nil {
		return fmt.Errorf("mark early: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("mark early: %w", err)
	}
	defer s.mu.Unlock()
	marks := s.early[id]
	if _, ok := marks[key]; ok {
		return nil
	}
	if len(marks) >= store.MaxEarly {
		return fmt.Errorf("mark early: %w: %d answers refused as too soon", store.ErrTooLarge, store.MaxEarly)
	}
	if marks == nil {
		if s.early == nil {
			s.early = map[string]map[[32]byte]struct{}{}
		}
		marks = map[[32]byte]struct{}{}
		s.early[id] = marks
	}
	marks[key] = struct{}{}
	return nil
}

// WasEarly implements [store.Early].
func (s *Store) WasEarly(ctx context.Context, id string, key [32]byte) (bool, error) {
	if err := s.lockRead(ctx); err != nil {
		return false, fmt.Errorf("was early: %w", err)
	}
	defer s.mu.Unlock()
	_, ok := s.early[id][key]
	return ok, nil
}
