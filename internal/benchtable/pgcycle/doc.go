// Package pgcycle holds the PostgreSQL rows of the ratio table in
// BENCHMARKS.md, as benchmarks (it has no other code):
//
//   - BenchmarkReplicas: full gate cycles (propose pending, prompt, show,
//     approve with the fake authenticator, execute) through two gates on
//     one PostgreSQL store, 8 workers each, for a fixed duration;
//   - BenchmarkPgbench/simple: pgbench -N at 16 clients on the same
//     cluster, for the same duration, the goal's baseline;
//   - BenchmarkPgbench/chain: the serial-chain floor, a pgbench script of
//     the gate cycle's shape (per cycle as many decisions, each locking
//     one chain head, appending a row of the audit row's size and
//     committing, and as many other commits as the cycle makes);
//   - BenchmarkPgbench/chain-overlap and chain-serial: the floor with each
//     decision's flush moved out from under the head, and decisions alone
//     from one client (context for the chain's design);
//   - BenchmarkCycleCounts: round trips, statements, transactions and
//     commits of one cycle, per step, counted on the wire by a proxy;
//   - BenchmarkReplicasWaits: BenchmarkReplicas with the server's wait
//     events sampled, to show where the connections' time goes.
//
// They skip unless ASU_POSTGRES_DSN is set (source .ci/postgres.sh) and,
// for the pgbench rows, pgbench is found (ASU_PGBENCH, PATH, or
// /usr/lib/postgresql/*/bin). go run ./internal/benchtable -only pgbench
// runs the rows interleaved.
package pgcycle
