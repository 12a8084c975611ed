package audit_test

import (
	"testing"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

// BenchmarkVerifyChain measures audit chain verification of 10,000 records
// and reports rows per second.
func BenchmarkVerifyChain(b *testing.B) {
	const rows = 10_000
	chain := audittest.Chain(rows, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	b.ReportAllocs()
	start := time.Now()
	n := 0
	for b.Loop() {
		if err := audit.VerifyChain(chain, canon.Digest{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(rows*n)/time.Since(start).Seconds(), "rows/s")
}
