// Package memory is the reference [store.Store]: every record in process
// memory behind one mutex, with the same semantics as the durable backends.
// Records are copied in and out, so callers never share slices with the
// store.
//
// # Use
//
// Tests and demos, and the quickstart example. Nothing survives the
// process, and replicas cannot share it: use store/sqlite or store/postgres
// for anything that must hold across restarts or processes.
package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// Store is an in-memory [store.Store]. The zero value is not usable; call
// [New].
type Store struct {
	mu      sync.Mutex
	closed  bool
	tickets map[string]*store.Approval
	// pending tickets indexed by session and by user, so that merging and
	// the cap check do not grow with the number of tickets.
	bySession map[string]map[string]*store.Approval
	byUser    map[string]map[string]*store.Approval
	byMerge   map[mergeKey]map[string]*store.Approval
	creds     map[string]*store.Credential
	invites   map[[32]byte]*store.Invite
	windows   map[string][]window
	streaks   map[string]store.Streak
	audit     []receipt.AuditRecord
	grants    map[string]*store.Grant
}

var _ store.Store = (*Store)(nil)

// mergeKey is what makes two pending tickets duplicates.
type mergeKey struct {
	session string
	digest  canon.Digest
}

// New returns an empty store.
func New() *Store {
	return &Store{
		tickets:   map[string]*store.Approval{},
		bySession: map[string]map[string]*store.Approval{},
		byUser:    map[string]map[string]*store.Approval{},
		byMerge:   map[mergeKey]map[string]*store.Approval{},
		creds:     map[string]*store.Credential{},
		invites:   map[[32]byte]*store.Invite{},
		windows:   map[string][]window{},
		streaks:   map[string]store.Streak{},
		grants:    map[string]*store.Grant{},
	}
}

// Close makes every later call fail with [store.ErrClosed]. It always
// returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// lock takes the mutex after checking ctx; on error the mutex is not held.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	return nil
}

// Baseline takes and releases the store's lock: the memory store's empty
// transaction, measured next to real operations by storetest.Bench.
func (s *Store) Baseline(ctx context.Context) error {
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	s.mu.Unlock()
	return nil
}
