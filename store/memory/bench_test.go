package memory_test

import (
	"testing"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s := memory.New(nil)
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}
