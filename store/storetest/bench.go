package storetest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Baseliner is implemented by stores that can run one empty transaction,
// the floor under every state change. [Bench] measures it next to the real
// operations so the ratio shows the store's own overhead.
type Baseliner interface {
	Baseline(ctx context.Context) error
}

// PrefillPending is how many pending tickets the PendingCap benchmark puts
// in the store before measuring.
const PrefillPending = 100_000

// BenchOption adjusts [Bench].
type BenchOption func(*benchOptions)

type benchOptions struct {
	fill func(b *testing.B, s store.Store, tickets []store.Approval)
}

// WithFill gives Bench a faster way than one Park each to store tickets as
// new pending tickets (one transaction, COPY), used to prepare the
// PendingCap benchmark's 100,000 tickets.
func WithFill(fill func(b *testing.B, s store.Store, tickets []store.Approval)) BenchOption {
	return func(o *benchOptions) { o.fill = fill }
}

// Bench runs the store benchmarks on stores from newStore, which must
// return a new, empty store and close it when b ends:
//
//   - Baseline/g1, Baseline/g16: one empty transaction ([Baseliner]), from 1
//     and 16 goroutines;
//   - ConsumeFinish/g1, ConsumeFinish/g16: Consume then Finish of an
//     approved ticket, each with its audit record;
//   - Cycle/g1, Cycle/g16: a whole approval cycle, Park, Resolve, Consume
//     and Finish, each with its audit record;
//   - Renew, Get: a lease renewal, next to a read of the same ticket;
//   - Park: parking distinct tickets, no caps;
//   - PendingCap/pending=0, PendingCap/pending=100000: Park with per-session
//     and per-user caps into a store already holding that many pending
//     tickets. The two should cost the same.
func Bench(b *testing.B, newStore func(b *testing.B) store.Store, opts ...BenchOption) {
	ctx := context.Background()
	var o benchOptions
	for _, f := range opts {
		f(&o)
	}
	for _, g := range []int{1, 16} {
		b.Run(fmt.Sprintf("Baseline/g%d", g), func(b *testing.B) {
			s := newStore(b)
			base, ok := s.(Baseliner)
			if !ok {
				b.Skip("store has no Baseline method")
			}
			parallel(b, g, func(int) error { return base.Baseline(ctx) })
		})
		b.Run(fmt.Sprintf("ConsumeFinish/g%d", g), func(b *testing.B) {
			s := newStore(b)
			ids := make([]string, b.N)
			for i := range ids {
				ids[i] = fixture.ParkApproved(b, s, i).ID
			}
			clock := follow(b, s)
			parallel(b, g, func(i int) error {
				if _, err := s.Consume(ctx, ids[i], fixture.Claim("key", "gate-1", clock()), fixture.Note("consume")); err != nil {
					return err
				}
				_, err := s.Finish(ctx, ids[i], 1, fixture.Done(clock()), fixture.Note("finish"))
				return err
			})
		})
		b.Run(fmt.Sprintf("Cycle/g%d", g), func(b *testing.B) {
			s := newStore(b)
			clock := follow(b, s)
			parallel(b, g, func(i int) error {
				// Each deciding time is read right before its call, as a gate
				// does: a call may wait for the write lock.
				a, _, err := s.Park(ctx, TicketAt(fmt.Sprintf("s%d", i), "u1", i, clock()), store.Caps{}, fixture.Note("park"))
				if err != nil {
					return err
				}
				if _, err := s.Resolve(ctx, a.ID, fixture.Approve(clock()), fixture.Note("approve")); err != nil {
					return err
				}
				if _, err := s.Consume(ctx, a.ID, fixture.Claim("key", "gate-1", clock()), fixture.Note("consume")); err != nil {
					return err
				}
				_, err = s.Finish(ctx, a.ID, 1, fixture.Done(clock()), fixture.Note("finish"))
				return err
			})
		})
	}
	b.Run("Renew", func(b *testing.B) {
		s := newStore(b)
		at := fixture.Now(b, s)
		a := fixture.ParkExecuting(b, s, 1, "gate-1", at.Add(fixture.Lease))
		parallel(b, 1, func(i int) error {
			return s.Renew(ctx, a.ID, "gate-1", 1, at.Add(fixture.Lease+time.Duration(i)*time.Microsecond))
		})
	})
	b.Run("Get", func(b *testing.B) {
		s := newStore(b)
		a := fixture.ParkExecuting(b, s, 1, "gate-1", fixture.Now(b, s).Add(fixture.Lease))
		parallel(b, 1, func(int) error {
			_, err := s.Get(ctx, a.ID)
			return err
		})
	})
	b.Run("Park", func(b *testing.B) {
		s := newStore(b)
		parallel(b, 1, func(i int) error {
			_, _, err := s.Park(ctx, Ticket(fmt.Sprintf("s%d", i/100), "u1", i), store.Caps{}, fixture.Note("park"))
			return err
		})
	})
	for _, prefill := range []int{0, PrefillPending} {
		s := newStore(b) // kept across the runs of the sub-benchmark
		filled, runs := false, 0
		b.Run(fmt.Sprintf("PendingCap/pending=%d", prefill), func(b *testing.B) {
			if !filled {
				fill(b, o, s, prefill)
				filled = true
			}
			// Sessions and users are new, each gets 2 tickets: the check reads
			// the (few) pending tickets of one session and one user whatever
			// the store holds.
			runs++
			base := 1_000_000_000 * runs
			caps := store.Caps{PerSession: 5, PerUser: 10}
			parallel(b, 1, func(i int) error {
				a := Ticket(fmt.Sprintf("cap-s%d", (base+i)/2), fmt.Sprintf("cap-u%d", (base+i)/2), base+i)
				_, _, err := s.Park(ctx, a, caps, fixture.Note("park"))
				return err
			})
		})
	}
}

// follow returns a clock that reads s's clock once and then follows it
// with the local monotonic clock, so that a long benchmark's deciding
// times stay within store.MaxSkew without reading the store's clock (a
// database round trip on PostgreSQL) at every operation.
func follow(b *testing.B, s store.Store) func() time.Time {
	base, start := fixture.Now(b, s), time.Now()
	return func() time.Time { return base.Add(time.Since(start)) }
}

// fill stores n pending tickets spread over n/100 sessions and users.
func fill(b *testing.B, o benchOptions, s store.Store, n int) {
	b.Helper()
	tickets := make([]store.Approval, n)
	for i := range tickets {
		tickets[i] = Ticket(fmt.Sprintf("fill-s%d", i/100), fmt.Sprintf("fill-u%d", i/100), i)
		tickets[i].ID = fmt.Sprintf("fill-%d", i)
	}
	if o.fill != nil {
		o.fill(b, s, tickets)
		return
	}
	for _, a := range tickets {
		if _, _, err := s.Park(context.Background(), a, store.Caps{}, nil); err != nil {
			b.Fatalf("prefill: %v", err)
		}
	}
}

// parallel runs f(0..b.N-1) on g goroutines and fails b on the first error.
func parallel(b *testing.B, g int, f func(i int) error) {
	b.Helper()
	var next atomic.Int64
	b.ResetTimer()
	if g == 1 {
		for i := 0; i < b.N; i++ {
			if err := f(i); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism((g + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f(int(next.Add(1) - 1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
