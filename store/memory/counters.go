package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/store"
)

// window is one counted time window of a key.
type window = store.CountWindow

// AddCount implements [store.Counters].
func (s *Store) AddCount(ctx context.Context, key string, start time.Time, delta int64) (int64, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, fmt.Errorf("add count: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return 0, fmt.Errorf("add count: %w", err)
	}
	defer s.mu.Unlock()
	return s.addCount(key, start, delta), nil
}

// AddCounts implements [store.Counters].
func (s *Store) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	if err := store.CheckCountOps(ops); err != nil {
		return nil, fmt.Errorf("add counts: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("add counts: %w", err)
	}
	defer s.mu.Unlock()
	out := make([]int64, len(ops))
	for i, op := range ops {
		out[i] = s.addCount(op.Key, op.Window, op.Delta)
	}
	return out, nil
}

// addCount is AddCount under the lock. A key whose windows all came back
// to zero leaves no entry.
func (s *Store) addCount(key string, start time.Time, delta int64) int64 {
	kept := s.windows[key] // at most two, oldest first
	if delta == 0 {
		for _, w := range kept {
			if w.Start.Equal(start) {
				return w.N
			}
		}
		return 0 // a read makes no window
	}
	kept, n := store.ApplyCount(kept, start, delta)
	if len(kept) == 0 {
		delete(s.windows, key)
	} else {
		s.windows[key] = kept
	}
	return n
}

// IncrStreak implements [store.Counters].
func (s *Store) IncrStreak(ctx context.Context, key string, at time.Time) (int, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, fmt.Errorf("incr streak: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return 0, fmt.Errorf("incr streak: %w", err)
	}
	defer s.mu.Unlock()
	st := s.streaks[key]
	st.Count++
	if at.After(st.Last) {
		st.Last = at
	}
	s.streaks[key] = st
	return st.Count, nil
}

// ResetStreak implements [store.Counters].
func (s *Store) ResetStreak(ctx context.Context, key string) error {
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("reset streak: %w", err)
	}
	defer s.mu.Unlock()
	delete(s.streaks, key)
	return nil
}

// GetStreak implements [store.Counters].
func (s *Store) GetStreak(ctx context.Context, key string) (store.Streak, error) {
	if err := s.lock(ctx); err != nil {
		return store.Streak{}, fmt.Errorf("get streak: %w", err)
	}
	defer s.mu.Unlock()
	return s.streaks[key], nil
}

var _ store.StreakReader = (*Store)(nil)

// GetStreaks implements [store.StreakReader]: every key under one lock.
func (s *Store) GetStreaks(ctx context.Context, keys []string) ([]store.Streak, error) {
	if err := store.CheckStreakKeys(keys); err != nil {
		return nil, fmt.Errorf("get streaks: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("get streaks: %w", err)
	}
	defer s.mu.Unlock()
	out := make([]store.Streak, len(keys))
	for i, k := range keys {
		out[i] = s.streaks[k]
	}
	return out, nil
}

// PruneCounts implements [store.CountPruner].
func (s *Store) PruneCounts(ctx context.Context, prefix string, before time.Time, limit int) (int, error) {
	limit, err := store.CheckPrune(prefix, before, limit)
	if err != nil {
		return 0, fmt.Errorf("prune counts: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return 0, fmt.Errorf("prune counts: %w", err)
	}
	defer s.mu.Unlock()
	n := 0
	for key, kept := range s.windows {
		if n == limit {
			break
		}
		if strings.HasPrefix(key, prefix) && len(kept) > 0 && kept[len(kept)-1].Start.Before(before) {
			delete(s.windows, key)
			n++
		}
	}
	return n, nil
}
