package store

import "sync"

// Watcher is implemented by stores that tell a waiting reader when a
// ticket changes, so that a wait costs nothing while nothing happens.
// A store without it is polled.
type Watcher interface {
	// Watch returns a channel closed at the first change of ticket id
	// after Watch was called (its state or its votes) made through this
	// store or, where the backend can tell, by another process sharing its
	// database; and release, which ends the watch. Call release once the
	// channel is no longer read. The channel may also close with no change
	// of id (a backend that cannot tell which ticket changed, or that lost
	// its notifications, closes them all): the reader reads the ticket
	// again.
	Watch(id string) (changed <-chan struct{}, release func())
}

// Hub keeps the watches of one store, for backends implementing
// [Watcher]: Watch registers one, Changed closes those of one ticket,
// ChangedAll every one. The zero Hub is ready to use and safe for
// concurrent use.
type Hub struct {
	mu      sync.Mutex
	watches map[string]map[chan struct{}]struct{}
	n       int
	// OnFirst, when set before first use, is called (outside the lock)
	// each time the number of watches goes from none to one, so a backend
	// listens only while someone waits.
	OnFirst func()
}

// Watch implements [Watcher.Watch].
func (h *Hub) Watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	if h.watches == nil {
		h.watches = map[string]map[chan struct{}]struct{}{}
	}
	set := h.watches[id]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		h.watches[id] = set
	}
	set[ch] = struct{}{}
	h.n++
	first := h.n == 1
	h.mu.Unlock()
	if first && h.OnFirst != nil {
		h.OnFirst()
	}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if set := h.watches[id]; set != nil {
				if _, ok := set[ch]; ok {
					delete(set, ch)
					h.n--
					if len(set) == 0 {
						delete(h.watches, id)
					}
				}
			}
		})
	}
}

// Changed wakes the watches of ticket id.
func (h *Hub) Changed(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.watches[id] {
		close(ch)
		h.n--
	}
	delete(h.watches, id)
}

// ChangedAll wakes every watch.
func (h *Hub) ChangedAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, set := range h.watches {
		for ch := range set {
			close(ch)
		}
		delete(h.watches, id)
	}
	h.n = 0
}

// Watching reports how many watches are live.
func (h *Hub) Watching() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
