package storetest_test

import (
	"testing"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

// A backend's conformance test supplies only a constructor.
func ExampleRun() {
	_ = func(t *testing.T) { // func TestConformance(t *testing.T)
		storetest.Run(t, func(t *testing.T) store.Store {
			s := memory.New(nil)
			t.Cleanup(func() { _ = s.Close() })
			return s
		})
	}
}

// A backend whose clock is injected also runs the tests that set it.
func ExampleRunClock() {
	_ = func(t *testing.T) { // func TestClock(t *testing.T)
		storetest.RunClock(t, func(t *testing.T, clock func() time.Time) store.Store {
			s := memory.New(&memory.Options{Clock: clock})
			t.Cleanup(func() { _ = s.Close() })
			return s
		})
	}
}

// Benchmarks take the same constructor; a store with a Baseline method is
// measured against it.
func ExampleBench() {
	_ = func(b *testing.B) { // func BenchmarkStore(b *testing.B)
		storetest.Bench(b, func(b *testing.B) store.Store {
			s := memory.New(nil)
			b.Cleanup(func() { _ = s.Close() })
			return s
		})
	}
}

// A backend that can change its own rows behind its back gives the suite
// the hook, and is held to reading back only what it wrote.
func ExampleWithAuditTamper() {
	_ = func(t *testing.T) { // func TestConformance(t *testing.T)
		storetest.Run(t, func(t *testing.T) store.Store {
			s := memory.New(nil)
			t.Cleanup(func() { _ = s.Close() })
			return s
		}, storetest.WithAuditTamper(func(t *testing.T, s store.Store, r audit.Record) {
			// e.g. UPDATE audit SET ... WHERE seq = r.Seq on a connection of its own
		}))
	}
}
