package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// Park implements [store.Tickets].
func (s *Store) Park(ctx context.Context, a store.Approval, caps store.Caps, note store.Note) (store.Approval, bool, error) {
	if err := a.Check(); err != nil {
		return store.Approval{}, false, fmt.Errorf("park: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, false, fmt.Errorf("park: %w", err)
	}
	defer s.mu.Unlock()
	if a.State != store.Approved {
		if dup := s.duplicate(a); dup != nil {
			merged := share(*dup)
			merged.Merged++
			recs, err := s.chain(noted(note, merged, true))
			if err != nil {
				return store.Approval{}, false, fmt.Errorf("park: %w", err)
			}
			dup.Merged++
			s.commit(recs)
			return merged, true, nil
		}
		if caps.PerSession > 0 && liveOf(s.bySession[a.Session], a.User, a.Requester.Agent, a.CreatedAt, caps.PerSession) >= caps.PerSession {
			return store.Approval{}, false, fmt.Errorf("park: session: %w", store.ErrPendingCap)
		}
		if caps.PerUser > 0 && liveReal(s.byUser[a.User], a.CreatedAt, caps.PerUser) >= caps.PerUser {
			return store.Approval{}, false, fmt.Errorf("park: user: %w", store.ErrPendingCap)
		}
	}
	t, err := s.add(a, note)
	if err != nil {
		return store.Approval{}, false, fmt.Errorf("park: %w", err)
	}
	return t, false, nil
}

// add stores a, checked, as a new ticket with note's record; s.mu is held.
func (s *Store) add(a store.Approval, note store.Note) (store.Approval, error) {
	if a.ID == "" {
		a.ID = store.NewID()
	}
	if _, ok := s.tickets[a.ID]; ok {
		return store.Approval{}, store.ErrDuplicate
	}
	if a.State == store.Approved {
		if a.ResolvedAt.IsZero() {
			a.ResolvedAt = a.CreatedAt
		}
	} else {
		a.State = store.Pending
	}
	// a is the ticket as it will be stored, its slices still the caller's:
	// the store keeps a copy, made before the note may write to them, of
	// all but the immutable Effect and Card.
	t := new(store.Approval)
	*t = share(a)
	recs, err := s.chain(notedShared(note, a, false))
	if err != nil {
		return store.Approval{}, err
	}
	s.tickets[t.ID] = t
	s.insert(t)
	if t.State == store.Pending {
		index(s.bySession, t.Session, t)
		index(s.byUser, t.User, t)
		index(s.byMerge, mergeKey{t.Session, t.Digest}, t)
	}
	s.commit(recs)
	return share(*t), nil
}

// duplicate returns the oldest live pending ticket identical to a, as the
// SQL backends pick it, or nil.
func (s *Store) duplicate(a store.Approval) *store.Approval {
	var dup *store.Approval
	for _, t := range s.byMerge[mergeKey{a.Session, a.Digest}] {
		if t.ExpiresAt.After(a.CreatedAt) && identical(t, &a) &&
			(dup == nil || byCreatedAt(t, dup) < 0) {
			dup = t
		}
	}
	return dup
}

// identical reports whether two proposals are the same call with the same
// provenance, so that one approval may answer both.
func identical(x, y *store.Approval) bool {
	return x.Session == y.Session && x.User == y.User && x.Digest == y.Digest &&
		x.Requester.User == y.Requester.User && x.Requester.Agent == y.Requester.Agent &&
		slices.Equal(x.Requester.Delegations, y.Requester.Delegations) &&
		slices.Equal(x.Taint, y.Taint) && x.Rationale == y.Rationale &&
		x.PolicyVersion == y.PolicyVersion && x.Approvers == y.Approvers
}

// liveReal counts the tickets in set whose expiry is after now and that
// are not practice requests (their session under audit.PracticeSession),
// stopping at limit.
func liveReal(set map[string]*store.Approval, now time.Time, limit int) int {
	n := 0
	for _, t := range set {
		if t.ExpiresAt.After(now) && !strings.HasPrefix(t.Session, audit.PracticeSession) {
			if n++; n >= limit {
				break
			}
		}
	}
	return n
}

// liveOf is live over the tickets of one principal, user and agent: a
// session id is the agent's own name for its run, so two principals'
// sessions may share one.
func liveOf(set map[string]*store.Approval, user, agent string, now time.Time, limit int) int {
	n := 0
	for _, t := range set {
		if t.User == user && t.Requester.Agent == agent && t.ExpiresAt.After(now) {
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
	if err := s.lockRead(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("get ticket: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return store.Approval{}, fmt.Errorf("get ticket: %w", store.ErrNotFound)
	}
	return share(*t), nil
}

// Resolve implements [store.Tickets].
func (s *Store) Resolve(ctx context.Context, id string, r store.Resolution, note store.Note) (store.Approval, error) {
	if err := r.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("resolve: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return store.Approval{}, fmt.Errorf("resolve: %w", err)
	}
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return store.Approval{}, fmt.Errorf("resolve: %w", store.ErrNotFound)
	}
	if r.To == store.Approved {
		if err := s.skew(r.At); err != nil {
			return store.Approval{}, fmt.Errorf("resolve: %w", err)
		}
	}
	next := share(*t)
	switch {
	case r.To == store.Revoked && t.State == store.Approved:
		next.State = store.Revoked
		next.Reason = r.Reason
		next.FinishedAt = r.At
	case r.To == store.Revoked || t.State != store.Pending:
		return store.Approval{}, fmt.Errorf("resolve: %w", store.ErrResolved)
	case r.To == store.Approved && !r.At.Before(t.ExpiresAt):
		return store.Approval{}, fmt.Errorf("resolve: %w", store.ErrExpired)
	default:
		next.State = r.To
		next.Approver = r.Approver
		next.Reason = r.Reason
		next.Evidence = append([]byte(nil), r.Evidence...)
		next.ResolvedAt = r.At
	}
	recs, err := s.chain(noted(note, next, false))
	if err != nil {
		return store.Approval{}, fmt.Errorf("resolve: %w", err)
	}
	if t.State == store.Pending {
		s.leavePending(t)
	}
	*t = next
	s.hub.Changed(t.ID)
	s.commit(recs)
	return share(*t), nil
}

// ExpirePending implements [store.Sweeper].
func (s *Store) ExpirePending(ctx context.Context, now time.Time, note store.Note) ([]store.Approval, error) {
	if err := store.CheckTime(now); err != nil {
		return nil, fmt.Errorf("expire pending: %w", err)
	}
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
	slices.SortFunc(due, byTime(func(a *store.Approval) time.Time { return a.ExpiresAt }))
	out := make([]store.Approval, len(due))
	notes := make([]func() (audit.Record, bool), len(due))
	for i, t := range due {
		out[i] = share(*t)
		out[i].State = store.Expired
		out[i].ResolvedAt = now
		notes[i] = noted(note, out[i], false)
	}
	recs, err := s.chain(notes...)
	if err != nil {
		return nil, fmt.Errorf("expire pending: %w", err)
	}
	for i, t := range due {
		s.leavePending(t)
		*t = share(out[i])
		s.hub.Changed(t.ID)
	}
	s.commit(recs)
	return out, nil
}

// List implements [store.Tickets].
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Approval, string, error) {
	if err := f.Check(); err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	if err := s.lockRead(ctx); err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	defer s.mu.Unlock()
	start := 0
	if f.After != "" {
		after, ok := s.tickets[f.After]
		if !ok {
			return nil, "", fmt.Errorf("list: cursor: %w", store.ErrNotFound)
		}
		i, found := slices.BinarySearchFunc(s.byCreated, after, byCreatedAt)
		if found {
			i++
		}
		start = i
	}
	limit := f.PageSize()
	var out []store.Approval
	for _, t := range s.byCreated[start:] {
		if !matches(t, f) {
			continue
		}
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, share(*t))
	}
	return out, "", nil
}

// matches reports whether t is selected by f.
func matches(t *store.Approval, f store.Filter) bool {
	return (len(f.States) == 0 || slices.Contains(f.States, t.State)) &&
		(f.User == "" || f.User == t.User) && (f.Session == "" || f.Session == t.Session) &&
		(f.Approvers == "" || f.Approvers == t.Approvers)
}

// Queue implements [store.Tickets.Queue]. The reference backend scans its
// tickets; the database backends read index ranges.
func (s *Store) Queue(ctx context.Context, q store.QueueFilter) ([]store.Approval, string, error) {
	if err := q.Check(); err != nil {
		return nil, "", fmt.Errorf("queue: %w", err)
	}
	if err := s.lockRead(ctx); err != nil {
		return nil, "", fmt.Errorf("queue: %w", err)
	}
	defer s.mu.Unlock()
	var after *store.Approval
	if q.After != "" {
		a, ok := s.tickets[q.After]
		if !ok {
			return nil, "", fmt.Errorf("queue: cursor: %w", store.ErrNotFound)
		}
		after = a
	}
	var hits []*store.Approval
	for _, t := range s.byCreated {
		if q.InQueue(t, after) {
			hits = append(hits, t)
		}
	}
	slices.SortFunc(hits, store.QueueOrder)
	n := q.PageSize()
	next := ""
	if len(hits) > n {
		hits, next = hits[:n], hits[n-1].ID
	}
	out := make([]store.Approval, len(hits))
	for i, t := range hits {
		out[i] = share(*t)
	}
	return out, next, nil
}
