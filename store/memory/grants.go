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
	if err := s.lockRead(ctx); err != nil {
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
	if err := store.CheckTime(at); err != nil {
		return store.Grant{}, fmt.Errorf("use grant: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Grant{}, fmt.Errorf("use grant: %w", err)
	}
	defer s.mu.Unlock()
	g, err := s.usable(id, at)
	if err != nil {
		return store.Grant{}, fmt.Errorf("use grant: %w", err)
	}
	g.Remaining--
	return g.Clone(), nil
}

// usable returns grant id if one use of it may be taken at at; s.mu is
// held.
func (s *Store) usable(id string, at time.Time) (*store.Grant, error) {
	g, ok := s.grants[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	if err := s.skew(at); err != nil {
		return nil, err
	}
	switch {
	case !g.RevokedAt.IsZero():
		return nil, store.ErrRevoked
	case !at.Before(g.ExpiresAt):
		return nil, store.ErrExpired
	case g.Remaining <= 0:
		return nil, store.ErrGrantUsedUp
	}
	return g, nil
}

// RevokeGrant implements [store.Grants].
func (s *Store) RevokeGrant(ctx context.Context, id string, at time.Time, note store.Note) error {
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("revoke grant: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("revoke grant: %w", err)
	}
	defer s.mu.Unlock()
	g, ok := s.grants[id]
	switch {
	case !ok:
		return fmt.Errorf("revoke grant: %w", store.ErrNotFound)
	case !g.RevokedAt.IsZero():
		return fmt.Errorf("revoke grant: %w", store.ErrRevoked)
	}
	recs, err := s.chain(noted(note, store.Approval{}, false))
	if err != nil {
		return fmt.Errorf("revoke grant: %w", err)
	}
	g.RevokedAt = at
	s.commit(recs)
	return nil
}

// ParkGranted implements [store.Grants].
func (s *Store) ParkGranted(ctx context.Context, a store.Approval, grantID string, note store.Note) (store.Approval, store.Grant, error) {
	if err := a.Check(); err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("park granted: %w", err)
	}
	if a.State != store.Approved {
		return store.Approval{}, store.Grant{}, fmt.Errorf("park granted: %w: a granted ticket is approved", store.ErrInvalid)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("park granted: %w", err)
	}
	defer s.mu.Unlock()
	g, err := s.usable(grantID, a.CreatedAt)
	if err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("park granted: %w", err)
	}
	t, err := s.add(a, note)
	if err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("park granted: %w", err)
	}
	g.Remaining--
	return t, g.Clone(), nil
}
