package main

import (
	"fmt"
	"os"
)

// postgresRows are the PostgreSQL rows of the table (package
// internal/benchtable/pgcycle): two gate replicas with 8 workers each
// against pgbench at 16 clients on the same cluster, and against the
// serial-chain floor, a pgbench script of the gate cycle's shape. Each
// side runs 10 seconds. They need a database: without ASU_POSTGRES_DSN
// (source .ci/postgres.sh) they are left out, with a line on standard
// error.
func postgresRows() []row {
	if os.Getenv("ASU_POSTGRES_DSN") == "" {
		fmt.Fprintln(os.Stderr, "benchtable: PostgreSQL rows left out: set ASU_POSTGRES_DSN (source .ci/postgres.sh)")
		return nil
	}
	const pkg = "./internal/benchtable/pgcycle"
	gate := bench{pkg, "BenchmarkReplicas", "1x", "cycles/s"}
	simple := bench{pkg, "BenchmarkPgbench/simple", "1x", "tps"}
	floor := bench{pkg, "BenchmarkPgbench/chain", "1x", "cycles/s"}
	overlap := bench{pkg, "BenchmarkPgbench/chain-overlap", "1x", "cycles/s"}
	simpleCPU := bench{pkg, "BenchmarkPgbench/simple", "1x", "machine-cpu-ms/tx"}
	otherCPU := bench{pkg, "BenchmarkReplicas", "1x", "other-cpu-ms/cycle"}
	return []row{
		{
			measure: "full gate cycles on PostgreSQL, 2 replicas x 8 workers, vs pgbench -N TPS at 16 clients, same cluster",
			goal:    "at least 0.15", within: atLeast(0.15), a: gate, b: simple,
		},
		{
			measure: "full gate cycles on PostgreSQL, 2 replicas x 8 workers, vs the serial-chain floor (pgbench script of the cycle's shape, 16 clients), per second",
			goal:    "(context)", within: atLeast(0.8), a: gate, b: floor,
		},
		{
			measure: "the serial-chain floor (cycles per second a single audit chain allows) vs pgbench -N TPS at 16 clients",
			goal:    "(context: at least 0.15 for the goal to be reachable)", within: atLeast(0.15), a: floor, b: simple,
		},
		{
			// The machine's CPU bounds cycles per second as the chain
			// does: a cycle costs the database server what its
			// statements cost, whatever the gates do.
			measure: "the CPU ceiling: cycles per second the machine's CPU allows with the gates' own work free (pgbench -N's machine CPU per transaction over a gate cycle's CPU outside the gate processes) vs pgbench -N TPS",
			goal:    "(context: at least 0.15 for the goal to be reachable)", within: atLeast(0.15), a: simpleCPU, b: otherCPU,
		},
		{
			measure: "the serial-chain floor with each decision's flush moved out from under the head (pgbench) vs the floor as the gate commits, cycles per second",
			goal:    "(context)", within: atLeast(1), a: overlap, b: floor,
		},
	}
}
