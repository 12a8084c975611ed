package pgcycle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/postgres"
)

var (
	seconds = flag.Int("pgcycle.seconds", 10, "seconds each side of a PostgreSQL row runs")
	conns   = flag.Int("pgcycle.conns", 8, "connections in each gate replica's pool")
)

// The shape of the goal's row: two gate replicas on one database, eight
// workers each, against pgbench at as many clients.
const (
	replicaCount = 2
	perReplica   = 8
	workers      = replicaCount * perReplica
)

// dsn returns ASU_POSTGRES_DSN or skips tb.
func dsn(tb testing.TB) string {
	tb.Helper()
	d := os.Getenv("ASU_POSTGRES_DSN")
	if d == "" {
		tb.Skip("PostgreSQL benchmarks skipped: set ASU_POSTGRES_DSN (e.g. `source .ci/postgres.sh`) to run them")
	}
	return d
}

// withParams returns dsn (a URL) with its host, database or query
// parameters replaced: the empty string leaves a part as it is.
func withParams(tb testing.TB, dsn, host, database string, params map[string]string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("ASU_POSTGRES_DSN must be a postgres:// URL for these benchmarks")
	}
	if host != "" {
		u.Host = host
	}
	if database != "" {
		u.Path = "/" + database
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// hostPort returns the host:port of a postgres:// URL.
func hostPort(tb testing.TB, dsn string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Port() == "" {
		tb.Fatalf("ASU_POSTGRES_DSN must be a postgres:// URL with a port for these benchmarks")
	}
	return u.Host
}

// connect opens one connection for the harness's own queries, closed when
// tb ends.
func connect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// replicas are gate replicas sharing one PostgreSQL schema, with a user
// per worker, each with a fake authenticator.
type replicas struct {
	schema string
	stores []*postgres.Store
	gates  []*gate.Gate
	users  []string
	auth   []*stepuptest.Authenticator
	admin  *pgx.Conn // the harness's own connection, search_path the schema
}

// generous are flood limits no benchmark reaches: the limiter still reads
// and writes its counters on every admission, as with the defaults, but
// admits every request.
var generous = flood.Limits{
	Session: flood.Rate{N: 1 << 40, Per: time.Hour}, Agent: flood.Rate{N: 1 << 40, Per: time.Hour},
	User: flood.Rate{N: 1 << 40, Per: time.Hour}, ApproverInflow: flood.Rate{N: 1 << 40, Per: time.Hour},
	Target: flood.Rate{N: 1 << 40, Per: time.Hour}, FirstContact: flood.Rate{N: 1 << 40, Per: time.Hour},
	FirstContactTarget: flood.Rate{N: 1 << 40, Per: time.Hour},
}

// openReplicas opens n gate replicas, each on its own store of a fresh
// schema of base (a DSN; host, when set, replaces its host:port, as for a
// proxy), with pool connections each, and enrolls users approvers. The
// schema is dropped when tb ends.
func openReplicas(tb testing.TB, base, host string, n, pool, users int) *replicas {
	tb.Helper()
	ctx := context.Background()
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	r := &replicas{schema: "pgcycle_" + hex.EncodeToString(rnd[:])}
	direct := withParams(tb, base, "", "", map[string]string{"search_path": r.schema, "application_name": "pgcycle-harness"})
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	for i := range n {
		name := fmt.Sprintf("pgcycle-gate%d", i+1)
		st, err := postgres.Open(ctx, withParams(tb, base, host, "", map[string]string{"application_name": name}),
			&postgres.Options{Schema: r.schema, MaxConns: int32(pool)})
		if err != nil {
			tb.Fatalf("open store: %v", err)
		}
		r.stores = append(r.stores, st)
		lim, err := flood.New(st, generous, storeClock(st))
		if err != nil {
			tb.Fatal(err)
		}
		g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st),
			gate.WithKey(key), gate.WithInstance(name), gate.WithDwell(0), gate.WithFlood(lim),
			gate.WithExecutor("send_email", plug.ExecutorFunc(
				func(context.Context, canon.Effect, string) ([]byte, error) { return []byte(`{}`), nil })))
		if err != nil {
			tb.Fatalf("new gate: %v", err)
		}
		r.gates = append(r.gates, g)
	}
	tb.Cleanup(func() {
		for _, st := range r.stores {
			_ = st.Close()
		}
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			tb.Errorf("drop schema: %v", err)
			return
		}
		defer func() { _ = c.Close(context.Background()) }()
		if _, err := c.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{r.schema}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	r.admin = connect(tb, direct)
	enroll := stepuptest.Enrollment(r.stores[0])
	for i := range users {
		u := fmt.Sprintf("user:w%d", i)
		a, err := stepuptest.Enroll(ctx, enroll, u)
		if err != nil {
			tb.Fatalf("enroll %s: %v", u, err)
		}
		r.users, r.auth = append(r.users, u), append(r.auth, a)
	}
	return r
}

// storeClock is the store's clock, as the gate reads it for its default
// flood control.
func storeClock(st *postgres.Store) func() time.Time {
	return func() time.Time {
		t, err := st.Now(context.Background())
		if err != nil {
			return time.Time{}
		}
		return t
	}
}

// call is worker w's i-th call: a send_email that needs approval, on
// behalf of the worker's own user, in the worker's own session.
func (r *replicas) call(w, i int) stepup.Call {
	c := stepuptest.SendEmail("finance@example.com")
	c.Step, c.Session, c.Principal.User = fmt.Sprint(i), fmt.Sprint("s-", w), r.users[w]
	return c
}

// step names the parts of a cycle, in order.
var steps = []string{"propose", "prompt", "show", "approve", "execute"}

// cycle is one full approval of worker w's i-th call: the agent's side
// (propose, execute) on one replica and the approver's (prompt, show,
// approve) on the next, as behind a load balancer. between, when set,
// runs after each step with the step's index.
func (r *replicas) cycle(ctx context.Context, w, i int, between func(int)) error {
	agent, desk := r.gates[w%len(r.gates)], r.gates[(w+1)%len(r.gates)].Desk()
	mark := func(s int) {
		if between != nil {
			between(s)
		}
	}
	tk, err := agent.Propose(ctx, r.call(w, i))
	if err != nil {
		return fmt.Errorf("propose: %w", err)
	}
	if tk.Status != stepup.StatusPending {
		return fmt.Errorf("propose: status %s, want pending", tk.Status)
	}
	mark(0)
	p, err := desk.Prompt(ctx, tk.ID)
	if err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	mark(1)
	if err := desk.Show(ctx, tk.ID); err != nil {
		return fmt.Errorf("show: %w", err)
	}
	mark(2)
	answer, err := r.auth[w].Assert(p.Options)
	if err != nil {
		return fmt.Errorf("assert: %w", err)
	}
	if _, err := desk.Approve(ctx, tk.ID, answer); err != nil {
		return fmt.Errorf("approve: %w", err)
	}
	mark(3)
	res, err := agent.Execute(ctx, tk.ID)
	if err != nil {
		return fmt.Errorf("execute: %w", err)
	}
	if string(res.Output) != `{}` {
		return fmt.Errorf("execute: output %q, want the executor's", res.Output)
	}
	mark(4)
	return nil
}

// run has every worker make cycles until d has passed (a cycle under way
// then is finished and counted) and returns the cycles made and the time
// they took.
func (r *replicas) run(ctx context.Context, d time.Duration) (int64, time.Duration, error) {
	var (
		done     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	start := time.Now()
	deadline := start.Add(d)
	for w := range r.users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				if err := r.cycle(ctx, w, i, nil); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("worker %d cycle %d: %w", w, i, err)
					}
					mu.Unlock()
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return done.Load(), time.Since(start), firstErr
}

// xids is the next transaction id the database will assign: the
// difference of two readings counts the writing transactions in between.
func xids(tb testing.TB, c *pgx.Conn) int64 {
	tb.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// auditSeq is the seq of the audit chain's head.
func (r *replicas) auditSeq(tb testing.TB) int64 {
	tb.Helper()
	h, err := r.stores[0].AuditHead(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return h.Seq
}

// shape is what one gate cycle commits: writing transactions, of which
// decisions (each appending one audit row to the chain), and an audit
// row's stored size in bytes.
type shape struct {
	commits, decisions, rowBytes int
}

// measureShape makes serial cycles on r with one worker and returns their
// shape: the least count over the cycles (a background write can only
// add), and the audit rows' mean size.
func measureShape(tb testing.TB, r *replicas, cycles int) shape {
	tb.Helper()
	ctx := context.Background()
	s := shape{commits: 1 << 30, decisions: 1 << 30}
	for i := range cycles {
		x, seq := xids(tb, r.admin), r.auditSeq(tb)
		if err := r.cycle(ctx, 0, i, nil); err != nil {
			tb.Fatal(err)
		}
		s.commits = min(s.commits, int(xids(tb, r.admin)-x))
		s.decisions = min(s.decisions, int(r.auditSeq(tb)-seq))
	}
	if err := r.admin.QueryRow(ctx, `SELECT coalesce(avg(pg_column_size(a.*)), 0)::int FROM audit a`).Scan(&s.rowBytes); err != nil {
		tb.Fatal(err)
	}
	return s
}

// machineBusy reads /proc/stat's first line: busy and total jiffies of
// all CPUs, for the machine's CPU use over an interval.
func machineBusy() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	var user, nice, sys, idle, iowait, irq, softirq, steal int64
	if _, err := fmt.Sscanf(string(b), "cpu %d %d %d %d %d %d %d %d", &user, &nice, &sys, &idle, &iowait, &irq, &softirq, &steal); err != nil {
		return 0, 0
	}
	busy = user + nice + sys + irq + softirq + steal
	return busy, busy + idle + iowait
}

// busyShare measures the machine's CPU busy share while f runs.
func busyShare(f func()) float64 {
	b0, t0 := machineBusy()
	f()
	b1, t1 := machineBusy()
	if t1 <= t0 {
		return 0
	}
	return float64(b1-b0) / float64(t1-t0)
}

// pgbenchPath finds pgbench: ASU_PGBENCH, then PATH, then the newest
// /usr/lib/postgresql/*/bin.
func pgbenchPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("ASU_PGBENCH"); p != "" {
		return p
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(found) == 0 {
		tb.Skip("pgbench rows skipped: no pgbench (set ASU_PGBENCH, or install postgresql)")
	}
	slices.SortFunc(found, func(a, b string) int { return versionOf(b) - versionOf(a) })
	return found[0]
}

// versionOf is the major version in a /usr/lib/postgresql/N/bin path.
func versionOf(p string) int {
	var v int
	_, _ = fmt.Sscanf(filepath.Base(filepath.Dir(filepath.Dir(p))), "%d", &v)
	return v
}

// pgbenchDB is the database pgbench's tables live in, beside the gates'.
const pgbenchDB = "asu_pgbench"

// scale is pgbench's scale factor: 16 branches, 1.6 million accounts.
const scale = 16

// pgbenchDSN creates pgbenchDB on the cluster of base if it is missing,
// initializes pgbench's tables at scale unless they are there, and
// returns its DSN.
func pgbenchDSN(tb testing.TB, bin, base string) string {
	tb.Helper()
	ctx := context.Background()
	c := connect(tb, base)
	var exists bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, pgbenchDB).Scan(&exists); err != nil {
		tb.Fatal(err)
	}
	if !exists {
		if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{pgbenchDB}.Sanitize()); err != nil {
			tb.Fatalf("create database: %v", err)
		}
	}
	d := withParams(tb, base, "", pgbenchDB, nil)
	pc := connect(tb, d)
	var branches int
	err := pc.QueryRow(ctx, `SELECT count(*) FROM pgbench_branches`).Scan(&branches)
	if err != nil || branches != scale {
		out, err := exec.Command(bin, "-i", "-q", "-s", fmt.Sprint(scale), d).CombinedOutput()
		if err != nil {
			tb.Fatalf("pgbench -i: %v\n%s", err, out)
		}
	}
	return d
}

// errNoTPS is pgbench output without its tps line.
var errNoTPS = errors.New("pgcycle: no tps in pgbench's output")

// tpsOf reads the "tps = N (without initial connection time)" line of
// pgbench's output.
func tpsOf(out []byte) (float64, error) {
	for line := range strings.Lines(string(out)) {
		var tps float64
		if _, err := fmt.Sscanf(line, "tps = %f (without initial connection time)", &tps); err == nil {
			return tps, nil
		}
	}
	return 0, errNoTPS
}
