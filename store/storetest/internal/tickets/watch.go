package tickets

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// wakeBound is how long a watch may take to wake before the check fails:
// a guard against a watch that never wakes, not a measure of speed.
const wakeBound = 20 * time.Second

// Watch checks [store.Watcher], for backends that implement it: every
// change of a ticket's state or votes (resolve, consume, finish, expire)
// wakes a watch of it taken before the change, a released watch is let go,
// and closing the store wakes every watch.
func Watch(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	w, ok := s.(store.Watcher)
	if !ok {
		t.Skip("the backend does not implement store.Watcher; gates poll it")
	}
	woken := func(t *testing.T, ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(wakeBound):
			t.Fatalf("%s did not wake the watch", what)
		}
	}
	park := func(t *testing.T, n int) store.Approval {
		p, _, err := s.Park(t.Context(), fixture.TicketAt("watch", "u1", n, fixture.Now(t, s)), store.Caps{}, nil)
		require.NoError(t, err)
		return p
	}
	t.Run("EveryChangeWakes", func(t *testing.T) {
		p := park(t, 1)
		ch, release := w.Watch(p.ID)
		defer release()
		p, err := s.Resolve(t.Context(), p.ID, fixture.Approve(fixture.Now(t, s)), nil)
		require.NoError(t, err)
		woken(t, ch, "approving")
		ch, release2 := w.Watch(p.ID)
		defer release2()
		_, err = s.Consume(t.Context(), p.ID, fixture.Claim("k", "gate-1", fixture.Now(t, s)), nil)
		require.NoError(t, err)
		woken(t, ch, "consuming")
	})
	t.Run("DenialWakes", func(t *testing.T) {
		p := park(t, 2)
		ch, release := w.Watch(p.ID)
		defer release()
		_, err := s.Resolve(t.Context(), p.ID, store.Resolution{To: store.Denied, At: fixture.Now(t, s)}, nil)
		require.NoError(t, err)
		woken(t, ch, "denying")
	})
	t.Run("ReleaseIsIdempotent", func(t *testing.T) {
		p := park(t, 3)
		for range 100 {
			_, release := w.Watch(p.ID)
			release()
			release()
		}
		ch, release := w.Watch(p.ID)
		defer release()
		_, err := s.Resolve(t.Context(), p.ID, store.Resolution{To: store.Cancelled, At: fixture.Now(t, s)}, nil)
		require.NoError(t, err)
		woken(t, ch, "cancelling after released watches")
	})
	t.Run("CloseWakes", func(t *testing.T) {
		p := park(t, 4)
		ch, release := w.Watch(p.ID)
		defer release()
		require.NoError(t, s.Close())
		woken(t, ch, "closing the store")
	})
}

// WatchAcross checks that a watch taken through one handle of a database
// wakes when another handle, as another process would, changes the ticket.
func WatchAcross(t *testing.T, first, second store.Store) {
	w, ok := first.(store.Watcher)
	if !ok {
		t.Skip("the backend does not implement store.Watcher")
	}
	p, _, err := second.Park(t.Context(), fixture.TicketAt("across", "u1", 1, fixture.Now(t, second)), store.Caps{}, nil)
	require.NoError(t, err)
	for _, to := range []store.State{store.Approved, store.Executing} {
		ch, release := w.Watch(p.ID)
		switch to {
		case store.Approved:
			p, err = second.Resolve(t.Context(), p.ID, fixture.Approve(fixture.Now(t, second)), nil)
		case store.Executing:
			p, err = second.Consume(t.Context(), p.ID, fixture.Claim("k", "gate-2", fixture.Now(t, second)), nil)
		}
		require.NoError(t, err)
		select {
		case <-ch:
		case <-time.After(wakeBound):
			t.Fatalf("a change to %s through the other handle did not wake the watch", to)
		}
		release()
	}
}
