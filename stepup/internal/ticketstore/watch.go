package ticketstore

import (
	"sync"
	"time"

	"github.com/agentstepup/asu/store"
)

// Watch remembers the expired executions a recoverer has seen, so that it
// takes one over only after watching it stay expired, with the same fence
// and lease, for a whole lease of its own clock. Its owner, if alive,
// renews within a lease (or finishes within it) by its own clock and gives
// up its run otherwise; so whatever the database's clock did meanwhile, a
// run taken over then does not overlap the owner's. The zero Watch is
// ready to use.
type Watch struct {
	mu   sync.Mutex
	seen map[string]watched
}

// watched is an expired execution as it was first seen.
type watched struct {
	fence      int64
	leaseUntil time.Time
	since      time.Time
}

// Unrenewed reports whether execution a has been watched unchanged for at
// least lease by now, this process's clock. A first sighting, or one whose
// fence or lease changed, starts the watch and reports false.
func (w *Watch) Unrenewed(a store.Approval, now time.Time, lease time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.seen[a.ID]
	if !ok || s.fence != a.Fence || !s.leaseUntil.Equal(a.LeaseUntil) {
		if w.seen == nil {
			w.seen = map[string]watched{}
		}
		w.seen[a.ID] = watched{fence: a.Fence, leaseUntil: a.LeaseUntil, since: now}
		return false
	}
	return now.Sub(s.since) >= lease
}

// Forget drops the watch of every execution not in listed (renewed,
// finished or taken over): the watch holds at most what one listing holds.
func (w *Watch) Forget(listed map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.seen {
		if !listed[id] {
			delete(w.seen, id)
		}
	}
}
