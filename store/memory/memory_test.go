package memory_test

import (
	"time"

	"testing"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

func TestClock(t *testing.T) {
	storetest.RunClock(t, func(t *testing.T, clock func() time.Time) store.Store {
		s := memory.New(&memory.Options{Clock: clock})
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestConformance runs the suite, holding the memory store to reading
// back only what it wrote through its test hook.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := memory.New(nil)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.WithAuditTamper(func(t *testing.T, s store.Store, r audit.Record) {
		memory.TamperAudit(s.(*memory.Store), r)
	}))
}
