package figures_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
)

// BenchmarkCompute measures Compute over a day of a busy gate's records
// at three sizes: the time per record should stay about flat (linear,
// plus the sorting of decision times).
func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		records := make([]audit.Record, n)
		decisions := []string{audit.DecisionAllow, audit.DecisionNeedsApproval, audit.DecisionApproved,
			audit.DecisionDenied, audit.DecisionExecuted}
		for i := range records {
			records[i] = audit.Record{Time: chainStart.UnixMilli() + rng.Int64N(86_400_000),
				EffectClass: []string{"read", "external", "irreversible"}[rng.IntN(3)],
				Decision:    decisions[rng.IntN(len(decisions))], Approver: fmt.Sprintf("user:r%d", rng.IntN(20)),
				DecisionMillis: rng.Int64N(120_000)}
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = figures.Compute(records)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/record")
		})
	}
}
