package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

var _ storetest.Baseliner = (*Store)(nil)

// BenchmarkStore runs the shared store benchmarks, with Baseline (one
// empty transaction) as the floor.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return testStore(b) },
		storetest.WithFill(func(b *testing.B, s store.Store, tickets []store.Approval) {
			fill(b, s.(*Store), tickets)
		}))
}

// BenchmarkDurableWrite is a second floor: one committed single-row UPDATE
// on the same pool. An empty transaction writes no WAL and so never waits
// for a flush to disk; every state change does, and this shows what one
// flush costs on the same server.
func BenchmarkDurableWrite(b *testing.B) {
	ctx := context.Background()
	s := testStore(b)
	const rows = 1024
	if _, err := s.pool.Exec(ctx, `CREATE TABLE floor (id integer PRIMARY KEY, n bigint NOT NULL);
		INSERT INTO floor SELECT g, 0 FROM generate_series(0, 1023) AS g`); err != nil {
		b.Fatal(err)
	}
	write := func(i int) error {
		_, err := s.pool.Exec(ctx, `UPDATE floor SET n = n + 1 WHERE id = $1`, i%rows)
		return err
	}
	for _, g := range []int{1, 16} {
		b.Run(fmt.Sprintf("g%d", g), func(b *testing.B) {
			if g == 1 {
				for i := 0; i < b.N; i++ {
					if err := write(i); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			var next atomic.Int64
			b.SetParallelism((g + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := write(int(next.Add(1))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCapCheck isolates the pending-cap check from the insert that
// follows it in Park: every Park goes to a session already at its cap, so
// it takes the locks, finds no duplicate, counts and is refused, writing
// nothing. Its cost must be the same with 0 and 100,000 other pending
// tickets in the store.
func BenchmarkCapCheck(b *testing.B) {
	ctx := context.Background()
	for _, prefill := range []int{0, storetest.PrefillPending} {
		b.Run(fmt.Sprintf("pending=%d", prefill), func(b *testing.B) {
			s := testStore(b)
			tickets := make([]store.Approval, prefill)
			for i := range tickets {
				tickets[i] = storetest.Ticket(fmt.Sprintf("fill-s%d", i/100), fmt.Sprintf("fill-u%d", i/100), i)
				tickets[i].ID = fmt.Sprintf("fill-%d", i)
			}
			fill(b, s, tickets)
			if _, err := s.pool.Exec(ctx, `ANALYZE tickets`); err != nil {
				b.Fatal(err)
			}
			caps := store.Caps{PerSession: 5, PerUser: 10}
			for i := range caps.PerSession {
				if _, _, err := s.Park(ctx, storetest.Ticket("full", "u-full", -1-i), caps, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, _, err := s.Park(ctx, storetest.Ticket("full", "u-full", 1_000_000+i), caps, nil)
				if !errors.Is(err, store.ErrPendingCap) {
					b.Fatalf("want the cap, got %v", err)
				}
			}
		})
	}
}

// BenchmarkRenew measures one lease renewal of an executing ticket, the
// write an owner makes every few seconds while its executor runs.
func BenchmarkRenew(b *testing.B) {
	ctx := context.Background()
	s := testStore(b)
	at, err := s.Now(ctx)
	if err != nil {
		b.Fatal(err)
	}
	a, _, err := s.Park(ctx, storetest.TicketAt("s1", "u1", 1, at), store.Caps{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: "u1", At: at}, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Consume(ctx, a.ID, store.Claim{Key: "k", Owner: "gate-1", At: at, LeaseUntil: at.Add(time.Minute)}, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.Renew(ctx, a.ID, "gate-1", 1, at.Add(time.Minute+time.Duration(i)*time.Microsecond)); err != nil {
			b.Fatal(err)
		}
	}
}
