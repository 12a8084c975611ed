package flood_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

const (
	floodSize = 1000 // proposals in one flood
	perMinute = 10   // the session's rate
)

// TestFloodFromOneSession: a hijacked agent sends 1,000 proposals from one
// session, spread over two gate replicas behind a load balancer. Sharing
// the store, the replicas admit the rate and no more; each keeping its own
// in-memory limiter, they admit the rate once per replica.
func TestFloodFromOneSession(t *testing.T) {
	ctx := context.Background()
	c := newClock()

	shared := memory.New(nil)
	replicas := []*flood.Limiter{
		newLimiter(t, shared, onlySession(perMinute), c),
		newLimiter(t, shared, onlySession(perMinute), c),
	}
	// The naive variant: each replica has its own token bucket.
	naive := []*rate.Limiter{
		rate.NewLimiter(rate.Every(time.Minute/perMinute), perMinute),
		rate.NewLimiter(rate.Every(time.Minute/perMinute), perMinute),
	}

	admitted, naiveAdmitted := 0, 0
	for i := range floodSize {
		// The flood takes two seconds of the clock.
		c.Set(t0.Add(time.Duration(i) * 2 * time.Millisecond))
		r := i % 2 // round robin
		err := replicas[r].Admit(ctx, req("hijacked", "alice"))
		if err == nil {
			admitted++
		} else {
			require.ErrorIs(t, err, flood.ErrRateLimited)
		}
		if naive[r].AllowN(c.Now(), 1) {
			naiveAdmitted++
		}
	}
	assert.Equal(t, perMinute, admitted, "shared counters: the session's rate, across replicas")
	assert.Equal(t, 2*perMinute, naiveAdmitted, "per-process limiters: the rate once per replica")
}

// TestFloodConcurrent runs the flood from 50 goroutines across two
// replicas at one instant: exactly the rate is admitted.
func TestFloodConcurrent(t *testing.T) {
	c := newClock()
	shared := memory.New(nil)
	replicas := []*flood.Limiter{
		newLimiter(t, shared, onlySession(perMinute), c),
		newLimiter(t, shared, onlySession(perMinute), c),
	}
	var admitted, other atomic.Int64
	var wg sync.WaitGroup
	for g := range 50 {
		wg.Go(func() {
			for range floodSize / 50 {
				switch err := replicas[g%2].Admit(context.Background(), req("hijacked", "alice")); {
				case err == nil:
					admitted.Add(1)
				case !errors.Is(err, flood.ErrRateLimited):
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(perMinute), admitted.Load())
	assert.Zero(t, other.Load())
}

// TestBoundaryBurst: a session that asks N times just before a window
// boundary and N times just after gets 2N past a fixed-window counter,
// and N past the sliding estimate.
func TestBoundaryBurst(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	lim := newLimiter(t, memory.New(nil), onlySession(perMinute), c)
	fixed := &fixedWindow{counters: memory.New(nil), n: perMinute, per: time.Minute}

	admitted, fixedAdmitted := 0, 0
	for _, at := range []time.Duration{59 * time.Second, 60 * time.Second} {
		c.Set(t0.Add(at))
		for range perMinute {
			if lim.Admit(ctx, req("s", "u")) == nil {
				admitted++
			}
			ok, err := fixed.admit(ctx, "s", c.Now())
			require.NoError(t, err)
			if ok {
				fixedAdmitted++
			}
		}
	}
	assert.Equal(t, perMinute, admitted)
	assert.Equal(t, 2*perMinute, fixedAdmitted)
}

// fixedWindow is the naive store-backed limiter: one counter per aligned
// window, nothing carried over.
type fixedWindow struct {
	counters store.Counters
	n        int64
	per      time.Duration
}

func (f *fixedWindow) admit(ctx context.Context, key string, now time.Time) (bool, error) {
	n, err := f.counters.AddCount(ctx, key, now.Truncate(f.per), 1)
	return n <= f.n, err
}
