package sqlite

import (
	"context"
	"time"

	"github.com/agentstepup/asu/store"
)

// watchPoll is how often, while someone watches, the store asks SQLite
// whether another connection (of this process or another) committed.
const watchPoll = 100 * time.Millisecond

var _ store.Watcher = (*Store)(nil)

// Watch implements [store.Watcher]. SQLite cannot say which ticket
// another connection changed, only that it committed (PRAGMA
// data_version): while anyone watches, one connection asks every 100 ms,
// and a commit anywhere wakes every watch. With nobody watching it asks
// nothing.
func (s *Store) Watch(id string) (<-chan struct{}, func()) {
	s.watchOnce.Do(func() { s.hub.OnFirst = s.startWatching })
	return s.hub.Watch(id)
}

// startWatching starts the poller unless one runs.
func (s *Store) startWatching() {
	if s.closed.Load() || !s.watching.CompareAndSwap(false, true) {
		return
	}
	s.pollers.Add(1)
	go func() {
		defer s.pollers.Done()
		s.pollDataVersion()
	}()
}

// pollDataVersion asks, on one connection of its own, for the data
// version until nobody watches or the store closes; a change wakes every
// watch. It gives up its connection when it ends.
func (s *Store) pollDataVersion() {
	defer func() {
		s.watching.Store(false)
		if s.hub.Watching() > 0 { // a watch came as this poller ended
			s.startWatching()
		}
	}()
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		s.hub.ChangedAll() // the watchers fall back to reading
		return
	}
	defer conn.Close()
	var last int64
	if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&last); err != nil {
		s.hub.ChangedAll()
		return
	}
	// A commit between a watch and this first read is already in last:
	// every watch taken before it is woken once, to read again.
	s.hub.ChangedAll()
	t := time.NewTicker(watchPoll)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		if s.closed.Load() || s.hub.Watching() == 0 {
			return
		}
		var v int64
		if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
			s.hub.ChangedAll()
			return
		}
		if v != last {
			last = v
			s.hub.ChangedAll()
		}
	}
}
