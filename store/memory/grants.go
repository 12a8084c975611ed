package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// PutGrant implements [store.Grants].
func (s *Store) PutGrant(ctx context.Context, g store.Grant) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("put grant: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("put grant: %w", err)
	}
	defer s.mu.Unlock()
	if _, ok := s.grants[g.ID]; ok {
		return fmt.Errorf("put grant: %w", store.ErrDuplicate)
	}
	g = g.Clone()
	s.grants[g.ID] = &g
	return nil
}

// GetGrant implements [store.Grants].
func (s *Store) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	if err := s.lock(ctx); err != nil {
		return store.Grant{}, fmt.Errorf("get grant: %w", err)
	}
	defer s.mu.Unlock()
	g, ok := s.grants[id]
	if !ok {
		return store.Grant{}, fmt.Errorf("get grant: %w", store.ErrNotFound)
	}
	return g.Clone(), nil
}

// UseGrant implements [store.Grants].
func (s *Store) UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error) {
	if err := s.lock(ctx); err != nil {
		return store.Grant{}, fmt.Errorf("use grant: %w", err)
	}
	defer s.mu.Unlock()
	g, ok := s.grants[id]
	switch {
	case !ok:
		return store.Grant{}, fmt.Errorf("use grant: %w", store.ErrNotFound)
	case !at.Before(g.ExpiresAt):
		return store.Grant{}, fmt.Errorf("use grant: %w", store.ErrExpired)
	case g.Remaining <= 0:
		return store.Grant{}, fmt.Errorf("use grant: %w", store.ErrGrantUsedUp)
	}
	g.Remaining--
	return g.Clone(), nil
}
