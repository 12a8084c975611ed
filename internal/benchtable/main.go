// Command benchtable re-measures the ratio table of BENCHMARKS.md: each
// row is two benchmarks, a measure and its same-run baseline, run
// interleaved (A then B in one round, B then A in the next) for a number
// of rounds, each from a test binary built once. A row's figure is the
// median of the per-round ratios A/B, with their spread (lowest and
// highest), so that load from elsewhere on the machine falls on both
// sides alike.
//
//	go run ./internal/benchtable              # every row, 5 rounds
//	go run ./internal/benchtable -rounds 9 -only queue
//	go run ./internal/benchtable -list
//
// It prints the table in markdown on standard output and each run's raw
// benchmark lines on standard error.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// bench is one benchmark: a package, the benchmark's full name (a
// regular expression anchored at both ends, sub-benchmarks joined by /),
// its -benchtime and the unit of the figure read from its output.
type bench struct {
	pkg, name, benchtime, unit string
}

// row is one line of the table: A over B.
type row struct {
	measure, goal string
	a, b          bench
	// within reports whether a ratio meets the goal.
	within func(float64) bool
}

func atMost(x float64) func(float64) bool  { return func(r float64) bool { return r <= x } }
func atLeast(x float64) func(float64) bool { return func(r float64) bool { return r >= x } }

// rows is the table. Keep it in step with BENCHMARKS.md.
var rows = []row{
	{
		measure: "gate cycle on SQLite (propose pending, prompt, show, approve, execute) vs the store's own cycle, per second",
		goal:    "at least 0.8", within: atLeast(0.8),
		a: bench{"./store/sqlite", "BenchmarkCycle/sync=FULL", "200x", "one-tx-ns/cycle"},
		b: bench{"./stepup/gate", "BenchmarkGateCycle/sqlite", "200x", "ns/op"},
	},
	{
		// A gate cycle on SQLite does the store's own cycle and the
		// gate's own work, which the memory store's cycle measures with
		// next to no storage: the first row can reach 0.8 only if this
		// one is at most 0.25.
		measure: "gate cycle on the memory store (the gate's own work, no disk) vs the store's own SQLite cycle",
		goal:    "(context: at most 0.25 for the row above to be reachable)", within: atMost(0.25),
		a: bench{"./stepup/gate", "BenchmarkGateCycle/memory", "200x", "ns/op"},
		b: bench{"./store/sqlite", "BenchmarkCycle/sync=FULL", "200x", "one-tx-ns/cycle"},
	},
	{
		// Both cycles again, each run by 16 workers at once on one file:
		// what the goals' 16 workers make of the rows above. Decisions
		// take turns on the file's write lock, and the gate's own work
		// runs beside the turns of others.
		measure: "gate cycle on SQLite vs the store's own cycle, both at 16 workers on one file, per second",
		goal:    "at least 0.8", within: atLeast(0.8),
		a: bench{"./store/sqlite", "BenchmarkCycleWorkers", "1000x", "ns/op"},
		b: bench{"./stepup/gate", "BenchmarkGateCycleWorkers/sqlite", "1000x", "ns/op"},
	},
	{
		measure: "Desk.Queue(50) at 10,000 pending vs one Desk.List page of 100",
		goal:    "at most 2", within: atMost(2),
		a: bench{"./stepup/gate", "BenchmarkQueue/sqlite/pending=10000/queue", "20x", "ns/op"},
		b: bench{"./stepup/gate", "BenchmarkQueue/sqlite/pending=10000/list", "20x", "ns/op"},
	},
	{
		measure: "Desk.Queue(50) at 10,000 pending vs at 100 pending (flat as pending grows)",
		goal:    "at most 2", within: atMost(2),
		a: bench{"./stepup/gate", "BenchmarkQueue/sqlite/pending=10000/queue", "20x", "ns/op"},
		b: bench{"./stepup/gate", "BenchmarkQueue/sqlite/pending=100/queue", "20x", "ns/op"},
	},
	{
		measure: "CPU of 200 idle waits, memory store, share of one core",
		goal:    "under 0.01", within: atMost(0.01),
		a: bench{"./stepup/gate", "BenchmarkIdleWaits/memory", "1x", "cpu-share"},
	},
	{
		measure: "CPU of 200 idle waits, SQLite store, share of one core",
		goal:    "under 0.01", within: atMost(0.01),
		a: bench{"./stepup/gate", "BenchmarkIdleWaits/sqlite", "1x", "cpu-share"},
	},
	{
		measure: "bytes allocated per Propose+Execute vs argument bytes, 128 KB",
		goal:    "at most 4", within: atMost(4),
		a: bench{"./stepup/gate", "BenchmarkCopies/128KB", "20x", "alloc-per-arg-byte"},
	},
	{
		measure: "verify audit, streaming (constant memory), vs VerifyChain of the same chain in memory, rows per second",
		goal:    "at least 0.5", within: atLeast(0.5),
		a: bench{"./audit", "BenchmarkVerifyStreamRatio", "30x", "ratio"},
	},
	{
		measure: "receipt.Verify vs one P-256 verify",
		goal:    "at most 1.3", within: atMost(1.3),
		a: bench{"./receipt", "BenchmarkVerifyRatio", "2000x", "ratio"},
	},
	{
		measure: "HTTP hop: gateway and client (over a gate that answers at once) above two bare loopback requests, share of that floor",
		goal:    "at most 0.25", within: atMost(0.25),
		a: bench{"./stepup/gateway", "BenchmarkHopLayer", "2000x", "above-floor"},
	},
	{
		measure: "HTTP hop with the in-process gate subtracted (gate, gateway and client against in process and the floor), share of the floor",
		goal:    "(context)", within: atMost(0.25),
		a: bench{"./stepup/gateway", "BenchmarkHop", "2000x", "above-floor"},
	},
}

func main() {
	rounds := flag.Int("rounds", 5, "rounds per row")
	only := flag.String("only", "", "run only rows whose measure matches this regular expression")
	list := flag.Bool("list", false, "list the rows and exit")
	flag.Parse()
	sel, err := regexp.Compile(*only)
	if err != nil {
		fail("-only: %v", err)
	}
	var todo []row
	for _, r := range slices.Concat(rows, postgresRows()) {
		if sel.MatchString(r.measure) {
			todo = append(todo, r)
		}
	}
	if *list {
		for _, r := range todo {
			fmt.Printf("%s (goal %s)\n", r.measure, r.goal)
		}
		return
	}
	if *rounds < 1 {
		fail("-rounds must be at least 1")
	}
	dir, err := os.MkdirTemp("", "benchtable")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(dir)
	binaries := map[string]string{}
	for _, r := range todo {
		for _, b := range []bench{r.a, r.b} {
			if b.pkg == "" || binaries[b.pkg] != "" {
				continue
			}
			bin := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(b.pkg)+".test")
			cmd := exec.Command("go", "test", "-c", "-o", bin, b.pkg)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				fail("building %s: %v", b.pkg, err)
			}
			binaries[b.pkg] = bin
		}
	}
	fmt.Println("| measure | goal | figure (median) | spread (lowest, highest) | rounds | met |")
	fmt.Println("|---|---|---:|---|---:|---|")
	for _, r := range todo {
		var ratios []float64
		for i := range *rounds {
			a, b := r.a, r.b
			var va, vb float64
			if r.b.pkg == "" {
				va = run(binaries[a.pkg], a)
				ratios = append(ratios, va)
				continue
			}
			if i%2 == 0 {
				va, vb = run(binaries[a.pkg], a), run(binaries[b.pkg], b)
			} else {
				vb, va = run(binaries[b.pkg], b), run(binaries[a.pkg], a)
			}
			ratios = append(ratios, va/vb)
		}
		slices.Sort(ratios)
		med := median(ratios)
		met := "no"
		if r.within(med) {
			met = "yes"
		}
		fmt.Printf("| %s | %s | %.3g | %.3g, %.3g | %d | %s |\n", r.measure, r.goal, med, ratios[0], ratios[len(ratios)-1], len(ratios), met)
	}
}

// run runs one benchmark once and returns its figure in b.unit.
func run(bin string, b bench) float64 {
	parts := strings.Split(b.name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", strings.Join(parts, "/"),
		"-test.benchtime", b.benchtime, "-test.count", "1", "-test.benchmem")
	cmd.Dir = pkgDir(b.pkg)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, os.Stderr)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fail("%s %s: %v", b.pkg, b.name, err)
	}
	v, ok := figure(&out, b.unit)
	if !ok {
		fail("%s %s: no %s in its output", b.pkg, b.name, b.unit)
	}
	return v
}

// figure reads the value reported in unit from benchmark output.
func figure(r io.Reader, unit string) (float64, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] == unit {
				v, err := strconv.ParseFloat(f[i], 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// pkgDir is the directory of a package given as ./path, from the module
// root (the working directory).
func pkgDir(pkg string) string { return filepath.FromSlash(strings.TrimPrefix(pkg, "./")) }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchtable: "+format+"\n", args...)
	os.Exit(1)
}
