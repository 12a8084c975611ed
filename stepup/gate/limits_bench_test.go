package gate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentstepup/asu/internal/cputime"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/sqlite"
)

// The benchmarks of this file are the gate's rows of the ratio table in
// BENCHMARKS.md (go run ./internal/benchtable): each reports what its
// row compares, and the table takes the same-run ratios.

// BenchmarkGateCycle measures one whole approval through the gate, as an
// approver and an agent make it: propose a call that needs approval,
// prompt, show, approve with a passkey, execute. The table compares it
// with store/sqlite's BenchmarkCycle, the store's own four commits;
// cpu-ns/op is the process's CPU per cycle.
func BenchmarkGateCycle(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			g, calls, auth := cycleSetup(b, open())
			ctx, d := context.Background(), g.Desk()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for i := range b.N {
				if err := gateCycle(ctx, g, d, calls[i], auth[i]); err != nil {
					b.Fatal(err)
				}
			}
			// The process's CPU (user and system, every thread) per cycle:
			// what the cycle costs beside what it waits for.
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// queueStore opens a SQLite store without synchronous commits, so that
// filling it with thousands of tickets is quick; the reads measured do
// not commit.
func queueStore(b *testing.B) store.Store {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "asu.db"), &sqlite.Options{RelaxedSyncUnsafe: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// BenchmarkQueue measures an approver's queue, the first 50 tickets they
// may decide, with 100 and with 10,000 tickets waiting for them, against
// one page of 100 of Desk.List over the same tickets: a queue costs its
// page, not what waits.
func BenchmarkQueue(b *testing.B) {
	for _, pending := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("sqlite/pending=%d", pending), func(b *testing.B) {
			st := queueStore(b)
			g, _ := benchGate(b, st, gate.WithoutFloodControlUnsafe())
			ctx := context.Background()
			for i := range pending {
				c := sendEmail("finance@example.com")
				c.Step, c.Session = fmt.Sprint(i), fmt.Sprint("s-", i%97)
				tk, err := g.Propose(ctx, c)
				if err != nil || tk.Status != stepup.StatusPending {
					b.Fatalf("propose: %v %s", err, tk.Status)
				}
			}
			d := g.Desk()
			user := sendEmail("").Principal.User
			b.Run("queue", func(b *testing.B) {
				for b.Loop() {
					q, err := d.Queue(ctx, user, 50)
					if err != nil || len(q) != min(50, pending) {
						b.Fatalf("queue: %v, %d entries", err, len(q))
					}
				}
			})
			b.Run("list", func(b *testing.B) {
				for b.Loop() {
					if _, _, err := d.List(ctx, user, store.Filter{States: []store.State{store.Pending}, Limit: 100}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkIdleWaits measures what 200 waits on tickets nobody decides
// cost: the process's CPU time over each second they wait, as a share of
// one core (cpu-share).
func BenchmarkIdleWaits(b *testing.B) {
	stores := map[string]func() store.Store{
		"memory": func() store.Store { return memory.New(nil) },
		"sqlite": func() store.Store { return queueStore(b) },
	}
	for name, open := range stores {
		b.Run(name, func(b *testing.B) {
			g, _ := benchGate(b, open(), gate.WithoutFloodControlUnsafe())
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := range 200 {
				c := pendingCall(i)
				tk, err := g.Propose(ctx, c)
				if err != nil || tk.Status != stepup.StatusPending {
					b.Fatalf("propose: %v %s", err, tk.Status)
				}
				wg.Go(func() { _, _ = g.Wait(ctx, tk.ID) })
			}
			time.Sleep(200 * time.Millisecond) // every wait is parked
			runtime.GC()
			b.ResetTimer()
			cpu0, wall0 := cputime.Process(), time.Now()
			for range b.N {
				time.Sleep(time.Second)
			}
			cpu, wall := cputime.Process()-cpu0, time.Since(wall0)
			b.StopTimer()
			cancel()
			wg.Wait()
			b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu-share")
		})
	}
}

// BenchmarkCopies measures the bytes a Propose and an Execute of an
// allowed 128 KB call allocate, per byte of its arguments
// (alloc-per-arg-byte), on the memory store: what the gate copies, with
// no database in between.
func BenchmarkCopies(b *testing.B) {
	for _, size := range []int{16 << 10, 128 << 10} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			g, _ := benchGate(b, memory.New(nil), gate.WithoutFloodControlUnsafe())
			ctx := context.Background()
			calls := make([]stepup.Call, b.N)
			for i := range calls {
				calls[i] = sizedDraft(i, size)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for i := range b.N {
				tk, err := g.Propose(ctx, calls[i])
				if err != nil || tk.Status != stepup.StatusAllowed {
					b.Fatalf("propose: %v %s", err, tk.Status)
				}
				if _, err := g.Execute(ctx, tk.ID); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			perOp := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
			b.ReportMetric(perOp/float64(len(calls[0].Args)), "alloc-per-arg-byte")
		})
	}
}

// BenchmarkGateCycleWorkers is BenchmarkGateCycle run by 16 workers at
// once, each approving its own callers' tickets: ns/op is the wall time
// per cycle, the inverse of cycles per second. The table compares it with
// store/sqlite's BenchmarkCycleWorkers, the store's own cycle at 16
// workers.
func BenchmarkGateCycleWorkers(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			g, calls, auth := cycleSetup(b, open())
			ctx, d := context.Background(), g.Desk()
			var next atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1)) - 1
					if err := gateCycle(ctx, g, d, calls[i], auth[i]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// cycleSetup is a gate on st and b.N calls that need approval, each by
// its own user with an enrolled authenticator.
func cycleSetup(b *testing.B, st store.Store) (*gate.Gate, []stepup.Call, []*stepuptest.Authenticator) {
	g, _ := benchGate(b, st)
	enroll := stepuptest.Enrollment(st)
	calls := make([]stepup.Call, b.N)
	auth := make([]*stepuptest.Authenticator, b.N)
	for i := range b.N {
		calls[i] = pendingCall(i)
		a, err := stepuptest.Enroll(context.Background(), enroll, calls[i].Principal.User)
		if err != nil {
			b.Fatal(err)
		}
		auth[i] = a
	}
	return g, calls, auth
}

// gateCycle is one approval through g: propose, prompt, show, approve
// with auth's passkey, execute.
func gateCycle(ctx context.Context, g *gate.Gate, d *gate.Desk, c stepup.Call, auth *stepuptest.Authenticator) error {
	tk, err := g.Propose(ctx, c)
	if err != nil {
		return err
	}
	if tk.Status != stepup.StatusPending {
		return fmt.Errorf("propose: %s %s", tk.Status, tk.Reason)
	}
	p, err := d.Prompt(ctx, tk.ID)
	if err != nil {
		return err
	}
	if err := d.Show(ctx, tk.ID); err != nil {
		return err
	}
	answer, err := auth.Assert(p.Options)
	if err != nil {
		return err
	}
	if _, err := d.Approve(ctx, tk.ID, answer); err != nil {
		return err
	}
	_, err = g.Execute(ctx, tk.ID)
	return err
}
