package memory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/agentstepup/asu/store"
)

// PutCredential implements [store.Credentials].
func (s *Store) PutCredential(ctx context.Context, c store.Credential) error {
	if err := c.Check(); err != nil {
		return fmt.Errorf("put credential: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("put credential: %w", err)
	}
	defer s.mu.Unlock()
	if _, ok := s.creds[string(c.ID)]; ok {
		return fmt.Errorf("put credential: %w", store.ErrDuplicate)
	}
	c = c.Clone()
	s.creds[string(c.ID)] = &c
	s.userCreds[c.User] = append(s.userCreds[c.User], &c)
	return nil
}

// GetCredential implements [store.Credentials].
func (s *Store) GetCredential(ctx context.Context, id []byte) (store.Credential, error) {
	if err := s.lock(ctx); err != nil {
		return store.Credential{}, fmt.Errorf("get credential: %w", err)
	}
	defer s.mu.Unlock()
	c, ok := s.creds[string(id)]
	if !ok {
		return store.Credential{}, fmt.Errorf("get credential: %w", store.ErrNotFound)
	}
	return c.Clone(), nil
}

// CredentialsByUser implements [store.Credentials].
func (s *Store) CredentialsByUser(ctx context.Context, user string) ([]store.Credential, error) {
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("credentials by user: %w", err)
	}
	defer s.mu.Unlock()
	var out []store.Credential
	for _, c := range s.userCreds[user] {
		out = append(out, c.Clone())
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return string(out[i].ID) < string(out[j].ID)
	})
	return out, nil
}

// AdvanceSignCountRelaxed implements [store.RelaxedSignCount]: a memory
// store has no disk to wait for, so it is AdvanceSignCount.
func (s *Store) AdvanceSignCountRelaxed(ctx context.Context, id []byte, n uint32) error {
	return s.AdvanceSignCount(ctx, id, n)
}

// AdvanceSignCount implements [store.Credentials].
func (s *Store) AdvanceSignCount(ctx context.Context, id []byte, n uint32) error {
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("advance sign count: %w", err)
	}
	defer s.mu.Unlock()
	c, ok := s.creds[string(id)]
	switch {
	case !ok:
		return fmt.Errorf("advance sign count: %w", store.ErrNotFound)
	case !c.RevokedAt.IsZero():
		return fmt.Errorf("advance sign count: %w", store.ErrRevoked)
	case n == 0 && c.SignCount == 0:
		return nil
	case n <= c.SignCount:
		return fmt.Errorf("advance sign count: %w", store.ErrCounter)
	}
	c.SignCount = n
	return nil
}

// RevokeCredential implements [store.Credentials].
func (s *Store) RevokeCredential(ctx context.Context, id []byte, at time.Time, note store.Note) error {
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("revoke credential: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("revoke credential: %w", err)
	}
	defer s.mu.Unlock()
	c, ok := s.creds[string(id)]
	switch {
	case !ok:
		return fmt.Errorf("revoke credential: %w", store.ErrNotFound)
	case !c.RevokedAt.IsZero():
		return fmt.Errorf("revoke credential: %w", store.ErrRevoked)
	}
	recs, err := s.chain(noted(note, store.Approval{}, false))
	if err != nil {
		return fmt.Errorf("revoke credential: %w", err)
	}
	c.RevokedAt = at
	s.commit(recs)
	return nil
}
