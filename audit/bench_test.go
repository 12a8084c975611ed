package audit_test

import (
	"bytes"
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

// BenchmarkVerifyStream measures the streaming verifier over the export of
// the same 10,000 records BenchmarkVerifyChain verifies in memory (the
// export itself held in memory, so no disk is timed), and reports rows
// per second. Goal: at least half VerifyChain's rate.
func BenchmarkVerifyStream(b *testing.B) {
	const rows = 10_000
	var export bytes.Buffer
	if err := audit.WriteChain(&export, audittest.Chain(rows, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))); err != nil {
		b.Fatal(err)
	}
	data := export.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := audit.NewVerifier(bytes.NewReader(data), audit.VerifyOptions{}).Verify(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(rows*n)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkVerifyStreamRatio alternates one streaming verification of the
// export and one VerifyChain of the same records in memory, in the same
// loop so that load on the machine hits both alike, and reports each
// one's rows per second and their ratio (goal: at least 0.5). The old
// way, ReadChain then VerifyChain, is timed too. best-ratio is the ratio
// of each side's fastest round, the figure least moved by other work on
// the machine.
func BenchmarkVerifyStreamRatio(b *testing.B) {
	const rows = 10_000
	chain := audittest.Chain(rows, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	var export bytes.Buffer
	if err := audit.WriteChain(&export, chain); err != nil {
		b.Fatal(err)
	}
	data := export.Bytes()
	var ts, tc, tr time.Duration
	bestS, bestC := time.Duration(1<<62), time.Duration(1<<62)
	n := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := audit.NewVerifier(bytes.NewReader(data), audit.VerifyOptions{}).Verify(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := audit.VerifyChain(chain, canon.Digest{}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		records, err := audit.ReadChain(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if err := audit.VerifyChain(records, canon.Digest{}); err != nil {
			b.Fatal(err)
		}
		ts += t1.Sub(t0)
		tc += t2.Sub(t1)
		bestS, bestC = min(bestS, t1.Sub(t0)), min(bestC, t2.Sub(t1))
		tr += time.Since(t2)
		n++
	}
	rate := func(d time.Duration) float64 { return float64(rows*n) / d.Seconds() }
	b.ReportMetric(rate(ts), "stream-rows/s")
	b.ReportMetric(rate(tc), "chain-rows/s")
	b.ReportMetric(rate(tr), "readchain-rows/s")
	b.ReportMetric(float64(tc)/float64(ts), "ratio")
	b.ReportMetric(float64(bestC)/float64(bestS), "best-ratio")
}
