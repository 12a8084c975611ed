package pgcycle

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstepup/asu/internal/cputime"
)

// The benchmarks of this file are the PostgreSQL rows of the ratio table
// in BENCHMARKS.md (go run ./internal/benchtable -only pgbench): each
// side runs for -pgcycle.seconds and reports a rate, and the table takes
// the same-run ratios, interleaved.

// BenchmarkReplicas measures full gate cycles per second (cycles/s)
// through two gate replicas on one PostgreSQL store, 8 workers each:
// propose a call that needs approval, prompt, show, approve with a
// passkey, execute, the agent's side on one replica and the approver's on
// the other. It also reports the gate process's CPU time per cycle and
// the machine's CPU busy share during the run.
func BenchmarkReplicas(b *testing.B) {
	base := dsn(b)
	for b.Loop() {
		b.StopTimer()
		r := openReplicas(b, base, "", replicaCount, *conns, workers)
		b.StartTimer()
		var (
			n       int64
			elapsed time.Duration
			err     error
		)
		cpu := cputime.Process()
		busy := busyShare(func() { n, elapsed, err = r.run(context.Background(), time.Duration(*seconds)*time.Second) })
		cpu = cputime.Process() - cpu
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/elapsed.Seconds(), "cycles/s")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "gate-cpu-ms/cycle")
		b.ReportMetric(busy, "machine-busy")
		// The machine's CPU per cycle outside the gate process: the
		// database server's (and the system's) share of a cycle.
		other := machineCPU(busy, elapsed) - cpu
		b.ReportMetric(float64(other.Microseconds())/1000/float64(n), "other-cpu-ms/cycle")
	}
}

// machineCPU is the CPU time the whole machine spent in d at busy share.
func machineCPU(busy float64, d time.Duration) time.Duration {
	return time.Duration(busy * float64(runtime.NumCPU()) * float64(d))
}

// BenchmarkPgbench runs pgbench on the gates' cluster, in a database of
// its own, at as many clients as the gates have workers, for as long:
//
//   - simple: pgbench -N (the simple-update transaction), in tps, the
//     goal's baseline;
//   - chain: the serial-chain floor, in cycles/s: per gate cycle, as many
//     decisions, each changing a row and appending a chained row of the
//     audit row's size under one head row in one durable commit
//     (pgbench/chain_append.sql), and as many other one-row commits
//     (pgbench/chain_write.sql), mixed by weight; the shape (commits,
//     decisions, row size) is measured on the gate at each run;
//   - chain-overlap: the same with each decision's disk flush moved out
//     from under the head (pgbench/chain_append_overlap.sql), what the
//     head would cost if decisions shared flushes; context, not a floor
//     of the gate as it is;
//   - chain-serial: decisions alone (pgbench/chain_append.sql) from one
//     client, so that the head never has a queue: the rate a single
//     chain allows when each holder hands it on at once, in decisions/s
//     and cycles/s (decisions per second over decisions per cycle).
func BenchmarkPgbench(b *testing.B) {
	base := dsn(b)
	bin := pgbenchPath(b)
	db := pgbenchDSN(b, bin, base)
	clients := []string{"-c", fmt.Sprint(workers), "-j", "2", "-T", fmt.Sprint(*seconds)}
	b.Run("simple", func(b *testing.B) {
		for b.Loop() {
			var tps float64
			busy := busyShare(func() { tps = pgbench(b, bin, append([]string{"-N"}, clients...), db) })
			b.ReportMetric(tps, "tps")
			b.ReportMetric(busy, "machine-busy")
			// The machine's CPU per transaction, pgbench's own included.
			b.ReportMetric(float64(machineCPU(busy, time.Second).Microseconds())/1000/tps, "machine-cpu-ms/tx")
		}
	})
	for _, v := range []struct{ name, script string }{
		{"chain", "chain_append.sql"}, {"chain-overlap", "chain_append_overlap.sql"},
	} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := measureShape(b, openReplicas(b, base, "", replicaCount, 2, 1), 5)
				if s.decisions < 1 || s.commits < s.decisions {
					b.Fatalf("cycle shape: %d commits, %d decisions", s.commits, s.decisions)
				}
				initFloor(b, bin, db)
				b.StartTimer()
				var tps float64
				busy := busyShare(func() { tps = pgbench(b, bin, floorArgs(s, v.script, clients), db) })
				b.ReportMetric(busy, "machine-busy")
				b.ReportMetric(tps/float64(s.commits), "cycles/s")
				b.ReportMetric(tps, "tps")
				b.ReportMetric(float64(s.commits), "commits/cycle")
				b.ReportMetric(float64(s.decisions), "decisions/cycle")
				b.ReportMetric(float64(s.rowBytes), "row-bytes")
			}
		})
	}
	b.Run("chain-serial", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := measureShape(b, openReplicas(b, base, "", replicaCount, 2, 1), 5)
			initFloor(b, bin, db)
			b.StartTimer()
			tps := pgbench(b, bin, []string{"-n", "-M", "prepared", "-D", fmt.Sprintf("pad=%d", s.rowBytes),
				"-f", script("chain_append.sql"), "-c", "1", "-j", "1", "-T", fmt.Sprint(*seconds)}, db)
			b.ReportMetric(tps, "decisions/s")
			b.ReportMetric(tps/float64(s.decisions), "cycles/s")
		}
	})
}

// initFloor (re)creates the floor's tables in db.
func initFloor(tb testing.TB, bin, db string) {
	tb.Helper()
	out, err := exec.Command(psqlNext(bin), "-q", "-v", "ON_ERROR_STOP=1", "-f", script("chain_init.sql"), db).CombinedOutput()
	if err != nil {
		tb.Fatalf("chain_init.sql: %v\n%s", err, out)
	}
}

// floorArgs are pgbench's arguments for a floor of shape s: the decision
// script append at the weight of the cycle's decisions, chain_write.sql
// at the weight of its other commits, so that cycles per second are tps
// over commits per cycle.
func floorArgs(s shape, appendScript string, clients []string) []string {
	args := []string{"-n", "-M", "prepared", "-D", fmt.Sprintf("pad=%d", s.rowBytes),
		"-f", fmt.Sprintf("%s@%d", script(appendScript), s.decisions)}
	if other := s.commits - s.decisions; other > 0 {
		args = append(args, "-f", fmt.Sprintf("%s@%d", script("chain_write.sql"), other))
	}
	return append(args, clients...)
}

// script is the path of a pgbench script of ../pgbench.
func script(name string) string { return filepath.Join("..", "pgbench", name) }

// psqlNext is the psql beside pgbench bin.
func psqlNext(bin string) string { return filepath.Join(filepath.Dir(bin), "psql") }

// pgbench runs bin with args against db and returns its tps.
func pgbench(tb testing.TB, bin string, args []string, db string) float64 {
	tb.Helper()
	out, err := exec.Command(bin, append(slices.Clone(args), db)...).CombinedOutput()
	if err != nil {
		tb.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	tps, err := tpsOf(out)
	if err != nil {
		tb.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return tps
}
