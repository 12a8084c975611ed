package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// cutOffStore is one gate's view of a shared store that, once cut off,
// cannot renew leases: its renewals fail at once ("fail"), or hang until
// the test ends ("hang"), as a call to a database behind a network
// partition does.
type cutOffStore struct {
	*memory.Store
	mode    string
	cut     atomic.Bool
	release chan struct{}
}

func (s *cutOffStore) Renew(ctx context.Context, id, owner string, fence int64, until time.Time) error {
	if s.cut.Load() {
		if s.mode == "hang" {
			<-s.release
		}
		return errors.New("database unreachable")
	}
	return s.Store.Renew(ctx, id, owner, fence, until)
}

// overlapExecutor tracks how many runs of a ticket are in progress at once
// across gates. A run lasts until its context ends or the test releases it.
type overlapExecutor struct {
	active, most atomic.Int64
	starts       atomic.Int64
	started      chan struct{}
	release      chan struct{}
}

func (x *overlapExecutor) Execute(ctx context.Context, _ canon.Effect, _ string) ([]byte, error) {
	x.starts.Add(1)
	n := x.active.Add(1)
	defer x.active.Add(-1)
	for {
		m := x.most.Load()
		if n <= m || x.most.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case x.started <- struct{}{}:
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-x.release:
		return []byte(`{}`), nil
	}
}

// TestLeaseOwnerCutOffNeverOverlaps: gate A runs a ticket and is then cut
// off from the store; gate B, which still reaches it, takes the execution
// over once the lease expired and it watched it go unrenewed for a lease.
// Two runs must never be in progress at once: A must give its run up
// (cancel the executor's context) before B can start. When A's renewals fail
// at once, it does. When a renewal hangs, as a call into a partitioned
// network does, A's watchdog waits inside that call and never cancels, so B's
// run overlaps A's: the executor runs twice at the same time.
//
// Time: the store and both gates read one fake clock; A's renewal ticker
// runs on real time (a third of the lease), so the test waits for it once.
func TestLeaseOwnerCutOffNeverOverlaps(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a real renewal tick")
	}
	for _, mode := range []string{"fail", "hang"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			const lease = 7 * time.Second // the least above 3 × store.MaxSkew, in whole seconds
			clock := stepuptest.NewClock(stepuptest.Start())
			shared := memory.New(&memory.Options{Clock: clock.Now})
			viewA := &cutOffStore{Store: shared, mode: mode, release: make(chan struct{})}
			t.Cleanup(func() { close(viewA.release) })
			cat, err := policy.NewCatalog("lease-attack-1", policy.Tool{Name: "sync", Title: "Sync", Class: card.ClassRead})
			require.NoError(t, err)
			exec := &overlapExecutor{started: make(chan struct{}, 1), release: make(chan struct{})}
			t.Cleanup(func() { close(exec.release) })
			newGate := func(st store.Gate, name string) *gate.Gate {
				g, err := gate.New(st, cat, fixedApprover{"user:dana"}, gate.WithLease(lease), gate.WithInstance(name),
					gate.WithLocalClock(clock.Now), gate.WithKey([]byte("lease-attack-key-0123456789abcdef")),
					gate.WithoutFloodControlUnsafe(), gate.WithExecutor("sync", exec))
				require.NoError(t, err)
				return g
			}
			a, b := newGate(viewA, "gate-a"), newGate(shared, "gate-b")
			tk, err := a.Propose(ctx, stepup.Call{Tool: "sync", Args: json.RawMessage(`{}`), Session: "s",
				Principal: canon.Principal{User: "user:dana", Agent: "agent:sync"}})
			require.NoError(t, err)
			require.True(t, tk.Status.Runnable())

			var wg sync.WaitGroup
			wg.Go(func() { _, _ = a.Execute(ctx, tk.ID) })
			<-exec.started
			viewA.cut.Store(true)
			clock.Advance(lease + time.Second) // A's lease is over by every clock
			// A's renewal ticker fires (a third of a lease of real time): a
			// gate that cannot renew gives its run up here.
			time.Sleep(lease/3 + 500*time.Millisecond)
			_, _ = b.Recover(ctx) // B starts watching the expired lease
			clock.Advance(lease + time.Second)
			wg.Go(func() { _, _ = b.Recover(ctx) }) // B takes it over and runs it
			// Until B's run has started.
			for range 500 {
				if exec.starts.Load() >= 2 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.EqualValues(t, 2, exec.starts.Load(), "B took the execution over")
			assert.LessOrEqual(t, exec.most.Load(), int64(1), "two runs of one ticket at once")
		})
	}
}
