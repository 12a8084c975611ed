package flood_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/sqlite"
)

// BenchmarkAdmit measures one admission with both rates and both lockouts
// on (two streak reads, two counts, two reads of the previous window),
// beside the in-process baseline golang.org/x/time/rate.Limiter.Allow.
func BenchmarkAdmit(b *testing.B) {
	limits := flood.Limits{
		Session: flood.Rate{N: 1 << 60, Per: time.Minute},
		User:    flood.Rate{N: 1 << 60, Per: time.Hour},
	}
	run := func(b *testing.B, counters store.Counters) {
		c := newClock()
		lim := newLimiter(b, counters, limits, c)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := lim.Admit(ctx, req("session-7", "alice")); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("baseline=xrate.Allow", func(b *testing.B) {
		lim := rate.NewLimiter(rate.Limit(1e12), 1<<40)
		b.ReportAllocs()
		for b.Loop() {
			if !lim.Allow() {
				b.Fatal("refused")
			}
		}
	})
	b.Run("store=memory", func(b *testing.B) { run(b, memory.New()) })
	b.Run("store=sqlite", func(b *testing.B) {
		st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), nil)
		require.NoError(b, err)
		b.Cleanup(func() { _ = st.Close() })
		run(b, st)
	})
}
