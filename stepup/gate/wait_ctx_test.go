package gate_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// endingStore ends the caller's context during its second Get, as a
// deadline passing mid-read would.
type endingStore struct {
	*memory.Store
	gets   atomic.Int32
	cancel atomic.Pointer[context.CancelFunc]
}

func (s *endingStore) Get(ctx context.Context, id string) (store.Approval, error) {
	if s.gets.Add(1) == 2 {
		(*s.cancel.Load())()
		return store.Approval{}, ctx.Err()
	}
	return s.Store.Get(ctx, id)
}

// Wait returns the ticket as last read when its context ends during a
// store read, not an empty ticket.
func TestWaitReturnsLastReadTicketWhenContextEnds(t *testing.T) {
	clock := stepuptest.NewClock(time.Unix(1_000, 0))
	st := &endingStore{Store: stepuptest.Memory(clock)}
	gate, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st),
		gate.WithPollInterval(time.Millisecond))
	require.NoError(t, err)
	tk, err := gate.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.cancel.Store(&cancel)
	st.gets.Store(0)
	got, err := gate.Wait(ctx, tk.ID)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, tk.ID, got.ID)
	assert.Equal(t, stepup.StatusPending, got.Status)
}

// clockEndingStore ends the caller's context while the gate reads the
// store's clock, and reports it as a database would: a failure that does
// not wrap the context's error.
type clockEndingStore struct {
	*memory.Store
	armed  atomic.Bool
	cancel context.CancelFunc
}

func (s *clockEndingStore) Now(ctx context.Context) (time.Time, error) {
	if s.armed.Load() {
		s.cancel()
		return time.Time{}, errors.New("database: connection closed")
	}
	return s.Store.Now(ctx)
}

// Wait says that its context ended, not that the store failed, when the
// context ends while the gate reads the store's clock: a runtime that
// gave up waiting must not read its own deadline as a store outage.
func TestWaitReportsItsContextWhenTheClockReadEnds(t *testing.T) {
	clock := stepuptest.NewClock(time.Unix(1_000, 0))
	st := &clockEndingStore{Store: stepuptest.Memory(clock)}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
	require.NoError(t, err)
	tk, err := g.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.cancel = cancel
	st.armed.Store(true)
	_, err = g.Wait(ctx, tk.ID)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, stepup.ErrStore)
}
