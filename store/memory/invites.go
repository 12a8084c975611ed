package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// CreateInvite implements [store.Invites].
func (s *Store) CreateInvite(ctx context.Context, inv store.Invite) error {
	if err := inv.Check(); err != nil {
		return fmt.Errorf("create invite: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("create invite: %w", err)
	}
	defer s.mu.Unlock()
	if _, ok := s.invites[inv.TokenHash]; ok {
		return fmt.Errorf("create invite: %w", store.ErrDuplicate)
	}
	s.invites[inv.TokenHash] = &inv
	return nil
}

// RedeemInvite implements [store.Invites].
func (s *Store) RedeemInvite(ctx context.Context, tokenHash [32]byte, at time.Time) (store.Invite, error) {
	if at.IsZero() {
		return store.Invite{}, fmt.Errorf("redeem invite: %w: time unset", store.ErrInvalid)
	}
	if err := s.lock(ctx); err != nil {
		return store.Invite{}, fmt.Errorf("redeem invite: %w", err)
	}
	defer s.mu.Unlock()
	inv, ok := s.invites[tokenHash]
	switch {
	case !ok:
		return store.Invite{}, fmt.Errorf("redeem invite: %w", store.ErrNotFound)
	case !inv.RevokedAt.IsZero():
		return store.Invite{}, fmt.Errorf("redeem invite: %w", store.ErrRevoked)
	case !inv.RedeemedAt.IsZero():
		return store.Invite{}, fmt.Errorf("redeem invite: %w", store.ErrConsumed)
	case !at.Before(inv.ExpiresAt):
		return store.Invite{}, fmt.Errorf("redeem invite: %w", store.ErrExpired)
	}
	inv.RedeemedAt = at
	return *inv, nil
}

// GetInvite implements [store.Invites].
func (s *Store) GetInvite(ctx context.Context, tokenHash [32]byte) (store.Invite, error) {
	if err := s.lock(ctx); err != nil {
		return store.Invite{}, fmt.Errorf("get invite: %w", err)
	}
	defer s.mu.Unlock()
	inv, ok := s.invites[tokenHash]
	if !ok {
		return store.Invite{}, fmt.Errorf("get invite: %w", store.ErrNotFound)
	}
	return *inv, nil
}

// RevokeInvite implements [store.Invites].
func (s *Store) RevokeInvite(ctx context.Context, tokenHash [32]byte, at time.Time, note store.Note) error {
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("revoke invite: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("revoke invite: %w", err)
	}
	defer s.mu.Unlock()
	inv, ok := s.invites[tokenHash]
	switch {
	case !ok:
		return fmt.Errorf("revoke invite: %w", store.ErrNotFound)
	case !inv.RevokedAt.IsZero():
		return fmt.Errorf("revoke invite: %w", store.ErrRevoked)
	case !inv.RedeemedAt.IsZero():
		return fmt.Errorf("revoke invite: %w", store.ErrConsumed)
	}
	recs, err := s.chain(noted(note, store.Approval{}, false))
	if err != nil {
		return fmt.Errorf("revoke invite: %w", err)
	}
	inv.RevokedAt = at
	s.commit(recs)
	return nil
}
