package pgcycle

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkCycleCounts counts what one gate cycle sends PostgreSQL, per
// step, on the wire (see the counting proxy): round trips, statements,
// statements prepared, explicit transactions and autocommit statements,
// and writing transactions (by transaction id, read beside the proxy).
// One worker makes serial cycles through two replicas, as
// BenchmarkReplicas's workers do; the figures are per cycle. With -v it
// logs each step's counts and the statements of a cycle by their text.
func BenchmarkCycleCounts(b *testing.B) {
	base := dsn(b)
	p := startProxy(b, hostPort(b, base))
	r := openReplicas(b, base, p.addr(), replicaCount, 2, 1)
	ctx := context.Background()
	const warm = 3 // prepare every statement on every connection first
	for i := range warm {
		if err := r.cycle(ctx, 0, i, nil); err != nil {
			b.Fatal(err)
		}
	}
	per := make([]counts, len(steps))
	writes := make([]int64, len(steps))
	var total counts
	cycles := 0
	for b.Loop() {
		prev, _ := p.count.snapshot()
		start := prev
		x := xids(b, r.admin)
		err := r.cycle(ctx, 0, warm+cycles, func(s int) {
			now, _ := p.count.snapshot()
			d := now.sub(prev)
			per[s] = add(per[s], d)
			nx := xids(b, r.admin)
			writes[s] += nx - x
			prev, x = now, nx
		})
		if err != nil {
			b.Fatal(err)
		}
		end, _ := p.count.snapshot()
		total = add(total, end.sub(start))
		cycles++
	}
	if _, err := p.count.snapshot(); err != nil {
		b.Fatalf("counting proxy: %v", err)
	}
	n := float64(cycles)
	b.ReportMetric(float64(total.RoundTrips)/n, "round-trips/cycle")
	b.ReportMetric(float64(total.Statements)/n, "statements/cycle")
	b.ReportMetric(float64(total.Explicit)/n, "transactions/cycle")
	b.ReportMetric(float64(total.Autocommit)/n, "autocommit/cycle")
	var w int64
	for _, v := range writes {
		w += v
	}
	b.ReportMetric(float64(w)/n, "commits/cycle")
	b.ReportMetric(float64(total.Parses)/n, "prepares/cycle")
	for s, name := range steps {
		c := per[s]
		b.Logf("%-8s round trips %5.1f  statements %5.1f  transactions %4.1f  autocommit %4.1f  writing %4.1f",
			name, float64(c.RoundTrips)/n, float64(c.Statements)/n, float64(c.Explicit)/n, float64(c.Autocommit)/n,
			float64(writes[s])/n)
	}
	for s, name := range steps {
		b.Logf("%s, statements per cycle by text:%s", name, byText(per[s].Texts, n))
	}
}

// byText lists texts, most run first, with their counts over n.
func byText(texts map[string]int64, n float64) string {
	keys := slices.SortedFunc(maps.Keys(texts), func(a, c string) int {
		return cmp.Or(cmp.Compare(texts[c], texts[a]), strings.Compare(a, c))
	})
	var sb strings.Builder
	for _, t := range keys {
		fmt.Fprintf(&sb, "\n%5.1f  %s", float64(texts[t])/n, t)
	}
	return sb.String()
}

// add returns a + b.
func add(a, b counts) counts {
	out := counts{RoundTrips: a.RoundTrips + b.RoundTrips, Statements: a.Statements + b.Statements,
		Parses: a.Parses + b.Parses, Explicit: a.Explicit + b.Explicit, Autocommit: a.Autocommit + b.Autocommit,
		Errors: a.Errors + b.Errors, Texts: maps.Clone(a.Texts)}
	if out.Texts == nil {
		out.Texts = map[string]int64{}
	}
	for k, v := range b.Texts {
		out.Texts[k] += v
	}
	return out
}

// BenchmarkReplicasWaits is BenchmarkReplicas with the server's view of
// the gates' connections sampled every 10 ms (pg_stat_activity): the
// share of connection-samples in each state and wait event. "idle in
// transaction" is a transaction waiting for its client (a round trip
// inside a transaction); Lock waits are on another transaction's row
// lock, named by the waiting statement; LWLock:WALWrite and
// IO:WALSync are commits waiting for the disk; active without a wait is
// the server's CPU; idle is time spent in the gate or between
// transactions. It reports the shares of lock waits (lock-share) and of
// transactions waiting on their client (idle-in-tx-share).
func BenchmarkReplicasWaits(b *testing.B) {
	base := dsn(b)
	for b.Loop() {
		b.StopTimer()
		r := openReplicas(b, base, "", replicaCount, *conns, workers)
		sampler := connect(b, base)
		b.StartTimer()
		ctx, cancel := context.WithCancel(context.Background())
		tally := map[string]int{}
		samples := 0
		done := make(chan error, 1)
		go func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					done <- nil
					return
				case <-tick.C:
				}
				rows, err := sampler.Query(ctx, `SELECT state || ' ' || coalesce(wait_event_type || ':' || wait_event, '-')
						|| CASE WHEN wait_event_type = 'Lock' THEN ' in ' || left(regexp_replace(query, '\s+', ' ', 'g'), 50) ELSE '' END
					FROM pg_stat_activity WHERE application_name LIKE 'pgcycle-gate%'`)
				if err != nil {
					done <- ctx.Err()
					return
				}
				for rows.Next() {
					var k string
					if err := rows.Scan(&k); err == nil {
						tally[k]++
						samples++
					}
				}
				rows.Close()
			}
		}()
		n, elapsed, err := r.run(context.Background(), time.Duration(*seconds)*time.Second)
		cancel()
		if serr := <-done; serr != nil && serr != context.Canceled {
			b.Fatalf("sampler: %v", serr)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/elapsed.Seconds(), "cycles/s")
		share := func(match func(string) bool) float64 {
			c := 0
			for k, v := range tally {
				if match(k) {
					c += v
				}
			}
			return float64(c) / float64(max(samples, 1))
		}
		b.ReportMetric(share(func(k string) bool { return strings.Contains(k, " Lock:") }), "lock-share")
		b.ReportMetric(share(func(k string) bool { return strings.HasPrefix(k, "idle in transaction") }), "idle-in-tx-share")
		keys := slices.SortedFunc(maps.Keys(tally), func(a, c string) int { return cmp.Compare(tally[c], tally[a]) })
		var sb strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&sb, "\n%5.1f%%  %s", 100*float64(tally[k])/float64(samples), k)
		}
		b.Logf("connection states over %d samples:%s", samples, sb.String())
	}
}
