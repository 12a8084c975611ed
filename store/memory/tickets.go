package memory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/agentstepup/asu/store"
)

// Park implements [store.Tickets].
func (s *Store) Park(ctx context.Context, a store.Approval, caps store.Caps) (store.Approval, bool, error) {
	if err := a.Check(); err != nil {
		return store.Approval{}, false, fmt.Errorf("park: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, false, fmt.Errorf("park: %w", err)
	}
	defer s.mu.Unlock()
	var dup *store.Approval // the oldest live duplicate, as the SQL backends pick
	for _, t := range s.byMerge[mergeKey{a.Session, a.Digest}] {
		if t.ExpiresAt.After(a.CreatedAt) && (dup == nil || t.CreatedAt.Before(dup.CreatedAt) ||
			(t.CreatedAt.Equal(dup.CreatedAt) && t.ID < dup.ID)) {
			dup = t
		}
	}
	if dup != nil {
		dup.Merged++
		return dup.Clone(), true, nil
	}
	if caps.PerSession > 0 && live(s.bySession[a.Session], a.CreatedAt, caps.PerSession) >= caps.PerSession {
		return store.Approval{}, false, fmt.Errorf("park: session: %w", store.ErrPendingCap)
	}
	if caps.PerUser > 0 && live(s.byUser[a.User], a.CreatedAt, caps.PerUser) >= caps.PerUser {
		return store.Approval{}, false, fmt.Errorf("park: user: %w", store.ErrPendingCap)
	}
	if a.ID == "" {
		a.ID = store.NewID()
	}
	if _, ok := s.tickets[a.ID]; ok {
		return store.Approval{}, false, fmt.Errorf("park: %w", store.ErrDuplicate)
	}
	a = a.Clone()
	a.State = store.Pending
	s.tickets[a.ID] = &a
	index(s.bySession, a.Session, &a)
	index(s.byUser, a.User, &a)
	index(s.byMerge, mergeKey{a.Session, a.Digest}, &a)
	return a.Clone(), false, nil
}

// live counts the tickets in set whose expiry is after now, stopping at
// limit.
func live(set map[string]*store.Approval, now time.Time, limit int) int {
	n := 0
	for _, t := range set {
		if t.ExpiresAt.After(now) {
			if n++; n >= limit {
				break
			}
		}
	}
	return n
}

func index[K comparable](m map[K]map[string]*store.Approval, key K, t *store.Approval) {
	set := m[key]
	if set == nil {
		set = map[string]*store.Approval{}
		m[key] = set
	}
	set[t.ID] = t
}

func unindex[K comparable](m map[K]map[string]*store.Approval, key K, id string) {
	delete(m[key], id)
	if len(m[key]) == 0 {
		delete(m, key)
	}
}

// leavePending drops t from the pending indexes; call it with every state
// change out of pending.
func (s *Store) leavePending(t *store.Approval) {
	unindex(s.bySession, t.Session, t.ID)
	unindex(s.byUser, t.User, t.ID)
	unindex(s.byMerge, mergeKey{t.Session, t.Digest}, t.ID)
}

// Get implements [store.Tickets].
func (s *Store) Get(ctx context.Context, id string) (store.Approval, error) {
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("get ticket: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return store.Approval{}, fmt.Errorf("get ticket: %w", store.ErrNotFound)
	}
	return t.Clone(), nil
}

// Resolve implements [store.Tickets].
func (s *Store) Resolve(ctx context.Context, id string, r store.Resolution) (store.Approval, error) {
	if err := r.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("resolve: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("resolve: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	switch {
	case !ok:
		return store.Approval{}, fmt.Errorf("resolve: %w", store.ErrNotFound)
	case t.State != store.Pending:
		return store.Approval{}, fmt.Errorf("resolve: %w", store.ErrResolved)
	case r.To == store.Approved && !r.At.Before(t.ExpiresAt):
		return store.Approval{}, fmt.Errorf("resolve: %w", store.ErrExpired)
	}
	s.leavePending(t)
	t.State = r.To
	t.Approver = r.Approver
	t.Reason = r.Reason
	t.Evidence = append([]byte(nil), r.Evidence...)
	t.ResolvedAt = r.At
	return t.Clone(), nil
}

// ExpirePending implements [store.Tickets].
func (s *Store) ExpirePending(ctx context.Context, now time.Time) ([]store.Approval, error) {
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("expire pending: %w", err)
	}
	defer s.mu.Unlock()
	var due []*store.Approval
	for _, set := range s.bySession {
		for _, t := range set {
			if !t.ExpiresAt.After(now) {
				due = append(due, t)
			}
		}
	}
	out := make([]store.Approval, 0, len(due))
	for _, t := range due {
		s.leavePending(t)
		t.State = store.Expired
		t.ResolvedAt = now
		out = append(out, t.Clone())
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ExpiresAt.Equal(out[j].ExpiresAt) {
			return out[i].ExpiresAt.Before(out[j].ExpiresAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Pending implements [store.Tickets].
func (s *Store) Pending(ctx context.Context, f store.Filter) ([]store.Approval, error) {
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	defer s.mu.Unlock()
	var out []store.Approval
	sets := s.bySession // every pending ticket, by session
	switch {
	case f.Session != "":
		sets = map[string]map[string]*store.Approval{f.Session: s.bySession[f.Session]}
	case f.User != "":
		sets = map[string]map[string]*store.Approval{f.User: s.byUser[f.User]}
	}
	for _, set := range sets {
		for _, t := range set {
			if (f.Session == "" || f.Session == t.Session) && (f.User == "" || f.User == t.User) {
				out = append(out, t.Clone())
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
