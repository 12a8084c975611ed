package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	asuaudit "github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// row is a Note making a small audit record of the ticket it is given.
func row(decision string) store.Note {
	return func(a store.Approval, _ bool) asuaudit.Record {
		return asuaudit.Record{TicketID: a.ID, Session: a.Session, Tool: a.Tool, ArgsDigest: a.Digest,
			Decision: decision, Reason: string(a.State)}
	}
}

// cycle is one approval cycle: propose (park), approve, execute (consume
// and finish), with an audit row for each decision. separate writes each
// row in its own transaction after the state change, as the gate did
// before decisions and rows were one transaction (and without a row for
// the consume, which it did not write).
func cycle(ctx context.Context, s *Store, n int, at time.Time, separate bool) error {
	audit := func(a store.Approval, decision string) error {
		if !separate {
			return nil
		}
		_, err := s.AppendAudit(ctx, row(decision)(a, false))
		return err
	}
	note := func(decision string) store.Note {
		if separate {
			return nil
		}
		return row(decision)
	}
	a, _, err := s.Park(ctx, storetest.TicketAt(fmt.Sprintf("s%d", n), "u1", n, at), store.Caps{}, note("needs_approval"))
	if err != nil {
		return err
	}
	if err := audit(a, "needs_approval"); err != nil {
		return err
	}
	if a, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: "u1", At: at}, note("approved")); err != nil {
		return err
	}
	if err := audit(a, "approved"); err != nil {
		return err
	}
	claim := store.Claim{Key: "k", Owner: "gate-1", At: at, LeaseUntil: at.Add(time.Minute)}
	if a, err = s.Consume(ctx, a.ID, claim, note("executing")); err != nil {
		return err
	}
	if a, err = s.Finish(ctx, a.ID, a.Fence, store.Outcome{State: store.Done, At: at}, note("executed")); err != nil {
		return err
	}
	return audit(a, "executed")
}

// TestCommitsPerCycle counts the commits of an approval cycle: four, one
// per decision with its row, where writing the rows separately took seven
// (and recorded no row for the consume); and one for an allowed call,
// stored approved with its row, where park, resolve and the row took
// three.
func TestCommitsPerCycle(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name     string
		separate bool
		commits  int64
		rows     int64
	}{
		{"one transaction per decision", false, 4, 4},
		{"rows written separately", true, 7, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
			before := s.commits.Load()
			require.NoError(t, cycle(ctx, s, 1, t0, c.separate))
			assert.Equal(t, c.commits, s.commits.Load()-before)
			head, err := s.AuditHead(ctx)
			require.NoError(t, err)
			assert.Equal(t, c.rows, head.Seq)
		})
	}
	t.Run("allowed call", func(t *testing.T) {
		s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
		a := storetest.TicketAt("s1", "u1", 1, t0)
		a.State, a.Approver = store.Approved, "policy"
		before := s.commits.Load()
		_, _, err := s.Park(ctx, a, store.Caps{}, row("allow"))
		require.NoError(t, err)
		assert.Equal(t, int64(1), s.commits.Load()-before)
	})
}

// BenchmarkCycle measures a whole approval cycle with each decision and
// its row in one transaction (one-tx-ns/cycle) against the same cycle with
// every row in a transaction of its own (separate-ns/cycle). The two run
// alternately, each on its own file, so that load from elsewhere on the
// machine falls on both alike; ratio is one-tx over separate.
func BenchmarkCycle(b *testing.B) {
	for _, relaxed := range []bool{false, true} {
		name := "sync=FULL"
		if relaxed {
			name = "sync=NORMAL"
		}
		b.Run(name, func(b *testing.B) {
			separate, one := benchStore(b, &Options{RelaxedSyncUnsafe: relaxed}), benchStore(b, &Options{RelaxedSyncUnsafe: relaxed})
			ctx := context.Background()
			var dSep, dOne time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := cycle(ctx, separate, i, start, true); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if err := cycle(ctx, one, i, mid, false); err != nil {
					b.Fatal(err)
				}
				dSep += mid.Sub(start)
				dOne += time.Since(mid)
			}
			b.ReportMetric(float64(dSep.Nanoseconds())/float64(b.N), "separate-ns/cycle")
			b.ReportMetric(float64(dOne.Nanoseconds())/float64(b.N), "one-tx-ns/cycle")
			b.ReportMetric(float64(dOne)/float64(dSep), "ratio")
		})
	}
}
