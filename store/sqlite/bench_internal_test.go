package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

func benchStore(b *testing.B, opts *Options) *Store {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "asu.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// fill inserts tickets in one transaction: the same rows Park writes,
// without a commit each.
func fill(b *testing.B, st store.Store, tickets []store.Approval) {
	s := st.(*Store)
	err := s.write(context.Background(), "fill", func(tx runner) error {
		for _, a := range tickets {
			requester, taint, err := encodeLists(a)
			if err != nil {
				return err
			}
			if _, err := s.insertNoted(context.Background(), tx, a, requester, taint, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return benchStore(b, nil) }, storetest.WithFill(fill))
}

// BenchmarkStoreRelaxed is BenchmarkStore with synchronous=NORMAL: what
// the same operations cost without waiting for the disk.
func BenchmarkStoreRelaxed(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		return benchStore(b, &Options{RelaxedSyncUnsafe: true})
	}, storetest.WithFill(fill))
}

// BenchmarkWriteFloor measures one transaction that writes one small row,
// the least a durable state change can cost on this disk.
func BenchmarkWriteFloor(b *testing.B) {
	for _, relaxed := range []bool{false, true} {
		name := "sync=FULL"
		if relaxed {
			name = "sync=NORMAL"
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b, &Options{RelaxedSyncUnsafe: relaxed})
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := s.write(ctx, "floor", func(tx runner) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO streaks (key, count) VALUES ('floor', 1)
						ON CONFLICT (key) DO UPDATE SET count = count + 1`)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyChain measures what Open adds to verify the audit chain:
// reading, decoding and hashing every record, in records per second.
func BenchmarkVerifyChain(b *testing.B) {
	path := filepath.Join(b.TempDir(), "asu.db")
	s, err := Open(b.Context(), path, &Options{RelaxedSyncUnsafe: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 20000
	for i := range n {
		r := storetest.Record(fmt.Sprintf("task-%d", i%50), t0)
		if _, err := s.AppendAudit(b.Context(), r); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		var r store.Report
		if err := s.checkChain(b.Context(), &r); err != nil || r.Damaged() || r.Records != n {
			b.Fatal(err, r.Problems)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
