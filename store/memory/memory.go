// Package memory is the reference [store.Store]: every record in process
// memory behind one mutex, with the same semantics as the durable backends.
// Records are copied in and out, so callers never share slices with the
// store, except a ticket's Effect and Card, which are immutable and shared
// by reference (see [store.Approval]). Each method holds the mutex for its whole run, which makes it one
// transaction: a state change and its audit record are both kept, or, when
// the audit record is refused, neither.
//
// # Integrity
//
// Records live in process memory, so nothing rots on a disk, but the
// store still reads back only what it wrote, as every backend does: each
// audit record read, and the head each append links to, is checked
// against its hash and link, and once damage is seen every deciding call
// fails with [store.ErrCorrupt] ([store.Damage]). Tests change records
// behind the store's back through a hook of its test files.
//
// # Use
//
// Tests and demos, and the quickstart example. Nothing survives the
// process, and replicas cannot share it: use store/sqlite or store/postgres
// for anything that must hold across restarts or processes.
package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// Options configures [New]. The zero value, like a nil *Options, means
// defaults.
type Options struct {
	// Clock is the store's clock (default time.Now): audit times and the
	// skew check of deciding methods read it. Tests inject a fake.
	Clock func() time.Time
}

// Store is an in-memory [store.Store]. The zero value is not usable; call
// [New].
type Store struct {
	clock   func() time.Time
	mu      sync.Mutex
	closed  bool
	tickets map[string]*store.Approval
	// every ticket by CreatedAt then ID, for List's pages
	byCreated []*store.Approval
	// pending tickets indexed by session and by user, so that merging and
	// the cap check do not grow with the number of tickets.
	bySession map[string]map[string]*store.Approval
	byUser    map[string]map[string]*store.Approval
	byMerge   map[mergeKey]map[string]*store.Approval
	executing map[string]*store.Approval
	creds     map[string]*store.Credential
	userCreds map[string][]*store.Credential // creds by user, so that a user's read does not grow with everyone's
	invites   map[[32]byte]*store.Invite
	windows   map[string][]window
	streaks   map[string]store.Streak
	audit     auditLog
	grants    map[string]*store.Grant
	early     map[string]map[[32]byte]struct{} // answers refused as too soon, per ticket
	// chained holds the records [Store.chain] makes until [Store.commit]
	// copies them into the log; reused, under mu, by every transaction.
	chained []audit.Record
	// damage is the first damage seen; once set, deciding calls refuse.
	damage store.Damage
	// hub wakes the watches of a ticket when it changes.
	hub store.Hub
}

var _ store.Store = (*Store)(nil)

// mergeKey narrows the candidates a pending ticket may merge into;
// [identical] decides.
type mergeKey struct {
	session string
	digest  canon.Digest
}

// New returns an empty store; opts may be nil.
func New(opts *Options) *Store {
	clock := time.Now
	if opts != nil && opts.Clock != nil {
		clock = opts.Clock
	}
	return &Store{
		clock:     clock,
		tickets:   map[string]*store.Approval{},
		bySession: map[string]map[string]*store.Approval{},
		byUser:    map[string]map[string]*store.Approval{},
		byMerge:   map[mergeKey]map[string]*store.Approval{},
		executing: map[string]*store.Approval{},
		creds:     map[string]*store.Credential{},
		userCreds: map[string][]*store.Credential{},
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
	s.hub.ChangedAll()
	return nil
}

// Now implements [store.Clock] with the clock of [Options].
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if err := s.lockRead(ctx); err != nil {
		return time.Time{}, fmt.Errorf("now: %w", err)
	}
	defer s.mu.Unlock()
	return s.clock(), nil
}

// lock takes the mutex after checking ctx, for a call that decides,
// writes or reads credentials, which a damaged store refuses; on error
// the mutex is not held.
func (s *Store) lock(ctx context.Context) error {
	if err := s.lockRead(ctx); err != nil {
		return err
	}
	if err := s.damage.Err(); err != nil {
		s.mu.Unlock()
		return err
	}
	return nil
}

// lockRead is lock for the reads a damaged store still answers: the
// audit chain, tickets and grants.
func (s *Store) lockRead(ctx context.Context) error {
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

// chain returns the audit records notes make, chained after the current
// head, without appending them: the caller appends them with [Store.commit]
// after every check passed, so a refused record leaves nothing behind. A
// nil note makes no record.
//
// The records it returns are valid until the next call, which reuses
// their array: the caller commits or drops them before releasing s.mu.
func (s *Store) chain(notes ...func() (audit.Record, bool)) ([]audit.Record, error) {
	var head audit.Record
	if last := s.audit.last(); last != nil {
		head = *last
	}
	var prev *audit.Record
	if n := s.audit.len(); n > 1 {
		prev = s.audit.at(n - 2)
	}
	if err := store.CheckHead(head, prev, int64(s.audit.len())); err != nil {
		return nil, s.damage.Note(err)
	}
	now := s.clock()
	clear(s.chained) // drop what the last transaction's records referenced
	out := s.chained[:0]
	defer func() { s.chained = out }()
	for _, note := range notes {
		rec, ok := note()
		if !ok {
			continue
		}
		r, err := store.ChainNext(head, rec, now)
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		out = append(out, r)
		head = r
	}
	return out, nil
}

// noted adapts a store.Note for [Store.chain]. The note gets its own copy
// of a, so that nothing it does to it reaches the store or the caller,
// sharing only the immutable Effect and Card.
func noted(note store.Note, a store.Approval, merged bool) func() (audit.Record, bool) {
	return func() (audit.Record, bool) {
		if note == nil {
			return audit.Record{}, false
		}
		return note(share(a), merged), true
	}
}

// notedShared is noted without the copy, for an a whose slices are the
// caller's own, never the store's: what the note does to them can reach
// only the caller that passed both.
func notedShared(note store.Note, a store.Approval, merged bool) func() (audit.Record, bool) {
	return func() (audit.Record, bool) {
		if note == nil {
			return audit.Record{}, false
		}
		return note(a, merged), true
	}
}

// commit appends records chained by [Store.chain].
func (s *Store) commit(records []audit.Record) {
	for _, r := range records {
		s.audit.append(r)
	}
}

// skew refuses at when it is off the store's clock by more than
// [store.MaxSkew].
func (s *Store) skew(at time.Time) error {
	return store.CheckSkew(at, s.clock())
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

// byTime orders tickets by t then ID.
func byTime(t func(*store.Approval) time.Time) func(a, b *store.Approval) int {
	return func(a, b *store.Approval) int {
		if c := t(a).Compare(t(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	}
}

var byCreatedAt = byTime(func(a *store.Approval) time.Time { return a.CreatedAt })

// insert adds t to byCreated, in order.
func (s *Store) insert(t *store.Approval) {
	if n := len(s.byCreated); n == 0 || byCreatedAt(s.byCreated[n-1], t) < 0 {
		s.byCreated = append(s.byCreated, t) // the common case: the newest ticket
		return
	}
	i, _ := slices.BinarySearchFunc(s.byCreated, t, byCreatedAt)
	s.byCreated = slices.Insert(s.byCreated, i, t)
}

var _ store.Watcher = (*Store)(nil)

// Watch implements [store.Watcher]: every change of a ticket's state or
// votes wakes its watches.
func (s *Store) Watch(id string) (<-chan struct{}, func()) { return s.hub.Watch(id) }
