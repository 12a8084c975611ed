package postgres

import (
	"context"
	"time"

	"github.com/agentstepup/asu/store"
)

var _ store.Watcher = (*Store)(nil)

// Watch implements [store.Watcher] with the database's notifications: a
// trigger announces every change of a ticket's state or votes on the
// channel asu_tickets when its transaction commits, whichever replica made
// it. From the first watch on, the store holds one connection of its pool
// listening there, blocked, costing nothing while nothing happens; when
// the connection is lost every watch wakes (its reader reads again) and
// the store listens anew.
func (s *Store) Watch(id string) (<-chan struct{}, func()) {
	s.watchOnce.Do(func() { s.hub.OnFirst = s.startListening })
	return s.hub.Watch(id)
}

// startListening starts the listener unless one runs.
func (s *Store) startListening() {
	if s.closed.Load() || !s.listening.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopListening.Store(&cancel)
	s.listeners.Add(1)
	go func() {
		defer s.listeners.Done()
		s.listen(ctx)
	}()
}

// listen holds one connection on LISTEN asu_tickets until the store
// closes, waking the watches of each ticket announced.
func (s *Store) listen(ctx context.Context) {
	defer s.listening.Store(false)
	for backoff := 50 * time.Millisecond; ctx.Err() == nil; backoff = min(2*backoff, 2*time.Second) {
		if err := s.listenOnce(ctx); ctx.Err() != nil || s.closed.Load() {
			return
		} else if err == nil {
			backoff = 50 * time.Millisecond
		}
		s.hub.ChangedAll() // notifications may have been lost: every reader reads again
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// listenOnce listens on one connection until it fails.
func (s *Store) listenOnce(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that listened is not handed back to the pool: it
	// would carry the LISTEN to its next user.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(ctx, `LISTEN asu_tickets`); err != nil {
		return err
	}
	s.hub.ChangedAll() // what changed before the LISTEN took effect
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.hub.Changed(n.Payload)
	}
}
