// Package process runs the store tests that need several operating-system
// processes on one database, for backends whose database several
// processes can open at once (SQLite's file, PostgreSQL): [Run] races
// processes on the same tickets, kills one between Consume and Finish, and
// runs the kill campaign, gates killed and replaced while they work;
// [RunRestart] runs that campaign across a restart of the database server.
//
// The test binary re-executes itself; [Backend] says how a backend wires
// it.
package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Backend wires [Run] and [RunRestart] to a backend whose database
// several processes can open at once.
//
// The test binary re-executes itself: Run starts os.Args[0] with
// -test.run selecting the calling test and environment variables naming a
// role; in that child process the same test calls Run again, which
// sees the role, plays it against the database named by the parent, and
// returns. So the test calling Run must do nothing else before it
// that a child should not repeat, and Open must work from a fresh process
// given only the target string:
//
//	func TestProcesses(t *testing.T) {
//		process.Run(t, process.Backend{
//			Create: func(t *testing.T) string { return filepath.Join(t.TempDir(), "asu.db") },
//			Open: func(t testing.TB, target string) store.Store {
//				s, err := sqlite.Open(t.Context(), target, nil)
//				require.NoError(t, err)
//				t.Cleanup(func() { s.Close() })
//				return s
//			},
//		})
//	}
type Backend struct {
	// Create makes a new, empty database and returns what Open needs to
	// reach it: a file path, a DSN. It runs once per subtest, in the parent.
	Create func(t *testing.T) string
	// Open opens the database named by target, in the parent and in every
	// child, and closes it when t ends.
	Open func(t testing.TB, target string) store.Store
	// Racers is how many processes race (default 4, at least 2).
	Racers int
	// Restart, when set, stops the database server abruptly (PostgreSQL:
	// pg_ctl restart -m immediate) and returns once it accepts
	// connections again. [RunRestart] needs it.
	Restart func(t *testing.T)
}

// The environment of a child process.
const (
	envRole    = "ASU_STORETEST_ROLE"    // "race", "crash", "gate" or "outage-gate"
	envName    = "ASU_STORETEST_NAME"    // t.Name() of the calling test
	envTarget  = "ASU_STORETEST_TARGET"  // what Create returned
	envTickets = "ASU_STORETEST_TICKETS" // comma-separated ticket ids
	envRacer   = "ASU_STORETEST_RACER"   // the child's number
	envVotes   = "ASU_STORETEST_VOTES"   // comma-separated id:quorum of the tickets to vote on
)

// Work each racing child does after the start signal.
const (
	procTickets = 16 // approved tickets every child tries to consume
	procAudit   = 16 // audit records every child appends
	procParks   = 4  // distinct tickets every child parks in one capped session
	procCap     = 5  // that session's cap
	procVotes   = 4  // pending tickets every child votes on, twice
	// crashLease is the lease of the crashing child's execution.
	crashLease = 300 * time.Millisecond
)

// Run runs the multi-process tests: Race (several processes
// consume the same approved tickets, append to one audit chain, park under
// one pending cap and vote on the same pending tickets, each as its own
// approver and once more as one shared approver, all on the same database:
// each ticket has exactly one winner, the chain is unbroken with one row
// per decision, the cap holds, and, read again from a store opened anew,
// every voted ticket holds each approver at most once, every accepted vote
// and no other, and is approved exactly when its votes reached the
// quorum), and Crash (a child is killed with SIGKILL after Consume and
// before Finish: on reopen the ticket is executing with the child's
// idempotency key and its row, a second Consume fails with
// [store.ErrConsumed], Reclaim refuses until the child's lease ends, then
// [store.Execution.Expired] lists it and Reclaim hands it over with the
// same key and the next fence), and Campaign (gates in separate processes
// run whole approval cycles and recover each other's expired leases while
// one of them is killed with SIGKILL every few hundred milliseconds and
// replaced, for a few seconds; afterwards every execution left behind is
// recovered, every decision the database holds has exactly its audit row
// and no row names a decision it does not hold, and the chain verifies).
func Run(t *testing.T, p Backend) {
	if role := os.Getenv(envRole); role != "" && os.Getenv(envName) == t.Name() {
		runChild(t, p, role)
		return
	}
	if p.Racers < 2 {
		p.Racers = 4
	}
	t.Run("Race", func(t *testing.T) { testProcessRace(t, p) })
	t.Run("Crash", func(t *testing.T) { testProcessCrash(t, p) })
	t.Run("Campaign", func(t *testing.T) { testProcessCampaign(t, p) })
}

// child is a started child process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

// startChild starts the test binary in role, for the test named name, with
// env added to its environment.
func startChild(t *testing.T, name, role, target string, racer int, tickets []string, env ...string) *child {
	t.Helper()
	var pattern []string
	for _, part := range strings.Split(name, "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(pattern, "/"), "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(),
		envRole+"="+role, envName+"="+name, envTarget+"="+target,
		envTickets+"="+strings.Join(tickets, ","), fmt.Sprintf("%s=%d", envRacer, racer))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return &child{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
}

// await reads the child's output until a line "storetest: want" and
// returns the storetest lines before it.
func (c *child) await(want string) ([]string, error) {
	var got, other []string
	for c.lines.Scan() {
		line, ok := strings.CutPrefix(c.lines.Text(), "storetest: ")
		if !ok {
			// The test framework's own lines (a child's failure): the
			// last few say why a child ended.
			other = append(other, c.lines.Text())
			if len(other) > 20 {
				other = other[1:]
			}
			continue
		}
		if line == want {
			return got, nil
		}
		got = append(got, line)
	}
	return got, fmt.Errorf("child ended before %q: %v; its last lines:\n%s", want, c.lines.Err(), strings.Join(other, "\n"))
}

// report is how a child tells its parent what happened.
func report(format string, args ...any) { fmt.Printf("storetest: "+format+"\n", args...) }

// outcome names the result of a call for the parent.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, store.ErrConsumed):
		return "consumed"
	case errors.Is(err, store.ErrPendingCap):
		return "capped"
	case errors.Is(err, store.ErrClockSkew):
		return "skew"
	case errors.Is(err, store.ErrDuplicate):
		return "duplicate"
	case errors.Is(err, store.ErrResolved):
		return "resolved"
	}
	return "error:" + strings.ReplaceAll(err.Error(), " ", "_")
}

// runChild plays role in a child process.
func runChild(t *testing.T, p Backend, role string) {
	ctx := context.Background()
	s := p.Open(t, os.Getenv(envTarget))
	racer := os.Getenv(envRacer)
	racerN, err := strconv.Atoi(racer)
	if err != nil {
		t.Fatalf("bad racer number: %v", err)
	}
	tickets := strings.Split(os.Getenv(envTickets), ",")
	in := bufio.NewReader(os.Stdin)
	switch role {
	case "gate":
		runGate(ctx, t, s, racer, false)
	case "outage-gate":
		runGate(ctx, t, s, racer, true)
	case "race":
		report("ready")
		if _, err := in.ReadString('\n'); err != nil {
			t.Fatalf("no start signal: %v", err)
		}
		at := fixture.Now(t, s)
		for _, id := range tickets {
			_, err := s.Consume(ctx, id, fixture.Claim("proc-"+racer, "gate-"+racer, at), fixture.Note("consume"))
			report("consume %s %s", id, outcome(err))
		}
		for i := 0; i < procAudit; i++ {
			_, err := s.AppendAudit(ctx, fixture.Record("proc-"+racer, fixture.T0))
			report("audit %d %s", i, outcome(err))
		}
		for i := 0; i < procParks; i++ {
			n := 1000*(racerN+1) + i // distinct digests across racers
			_, _, err := s.Park(ctx, fixture.Ticket("capped", "u-shared", n), store.Caps{PerSession: procCap}, fixture.Note("park"))
			report("park %d %s", i, outcome(err))
		}
		for _, pair := range strings.Split(os.Getenv(envVotes), ",") {
			id, q, _ := strings.Cut(pair, ":")
			quorum, err := strconv.Atoi(q)
			if err != nil {
				t.Fatalf("bad quorum: %v", err)
			}
			for _, who := range []string{"racer-" + racer, "shared"} {
				// The clock is read again for each vote: the work before
				// may have taken longer than the skew bound.
				_, err := s.Vote(ctx, id, fixture.Vote(who, fixture.Now(t, s)), quorum, "quorum", fixture.Note("vote"))
				report("vote %s %s %s", id, who, outcome(err))
			}
		}
		report("done")
	case "crash":
		at := fixture.Now(t, s)
		c := store.Claim{Key: "crash-key", Owner: "gate-crash", At: at, LeaseUntil: at.Add(crashLease)}
		if _, err := s.Consume(ctx, tickets[0], c, fixture.Note("consume")); err != nil {
			report("consume %s", outcome(err))
			return
		}
		report("consumed")
		_, _ = in.ReadString('\n') // the parent kills us here, before Finish
		_, _ = s.Finish(ctx, tickets[0], 1, fixture.Done(at), fixture.Note("finish"))
		report("finished")
	default:
		t.Fatalf("unknown role %q", role)
	}
}

func testProcessRace(t *testing.T, p Backend) {
	ctx := context.Background()
	target := p.Create(t)
	s := p.Open(t, target)
	var ids []string
	for n := 0; n < procTickets; n++ {
		ids = append(ids, fixture.ParkApproved(t, s, n).ID)
	}
	// Tickets to vote on, whose quorums are reached early, by the last
	// approver and never: there are p.Racers+1 distinct approvers.
	quorums := map[string]int{}
	var pairs []string
	at := fixture.Now(t, s)
	for i, q := range []int{2, p.Racers, p.Racers + 1, p.Racers + 2}[:procVotes] {
		v, _, err := s.Park(ctx, fixture.TicketAt("voted", "u-voted", 2000+i, at), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err)
		quorums[v.ID] = min(q, store.MaxQuorum)
		pairs = append(pairs, fmt.Sprintf("%s:%d", v.ID, quorums[v.ID]))
	}
	children := make([]*child, p.Racers)
	for r := range children {
		children[r] = startChild(t, t.Name()[:strings.LastIndex(t.Name(), "/")], "race", target, r, ids,
			envVotes+"="+strings.Join(pairs, ","))
	}
	for _, c := range children {
		_, err := c.await("ready")
		require.NoError(t, err)
	}
	for _, c := range children {
		_, err := io.WriteString(c.stdin, "go\n")
		require.NoError(t, err)
	}
	winners := map[string][]int{} // ticket id -> racers whose consume succeeded
	audits, parks := 0, 0
	accepted := map[string]map[string]int{} // voted ticket id -> approver -> accepted votes
	refused := map[string][]string{}        // voted ticket id -> "approver outcome" of refused votes
	for r, c := range children {
		lines, err := c.await("done")
		require.NoError(t, err, "racer %d", r)
		require.NoError(t, c.cmd.Wait(), "racer %d", r)
		for _, line := range lines {
			f := strings.Fields(line)
			if f[0] == "vote" {
				require.Len(t, f, 4, "racer %d: %s", r, line)
				if accepted[f[1]] == nil {
					accepted[f[1]] = map[string]int{}
				}
				switch f[3] {
				case "ok":
					accepted[f[1]][f[2]]++
				case "duplicate", "resolved":
					refused[f[1]] = append(refused[f[1]], f[2]+" "+f[3])
				default:
					t.Errorf("racer %d: unexpected %s", r, line)
				}
				continue
			}
			require.Len(t, f, 3, "racer %d: %s", r, line)
			switch {
			case f[0] == "consume" && f[2] == "ok":
				winners[f[1]] = append(winners[f[1]], r)
			case f[0] == "audit" && f[2] == "ok":
				audits++
			case f[0] == "park" && f[2] == "ok":
				parks++
			case f[2] == "consumed" || f[2] == "capped":
			default:
				t.Errorf("racer %d: unexpected %s", r, line)
			}
		}
	}
	for _, id := range ids {
		require.Len(t, winners[id], 1, "ticket %s: exactly one process wins", id)
		a, err := s.Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, store.Executing, a.State)
		assert.Equal(t, fmt.Sprintf("proc-%d", winners[id][0]), a.IdempotencyKey, "the winner's key is recorded")
	}
	assert.Equal(t, p.Racers*procAudit, audits)
	rows := fixture.Chain(t, s)
	votes := checkProcessVotes(t, p.Open(t, target), quorums, accepted, refused, p.Racers+1)
	assert.Len(t, rows, 2*procTickets+procTickets+p.Racers*procAudit+parks+procVotes+votes,
		"one row per decision: parks and approvals, one consume per ticket, appends, capped parks, "+
			"voted tickets' parks and accepted votes")
	assert.Equal(t, min(procCap, p.Racers*procParks), parks, "the pending cap holds across processes")
	pending, _, err := s.List(ctx, store.Filter{Session: "capped", States: []store.State{store.Pending}})
	require.NoError(t, err)
	assert.Len(t, pending, parks)
}

func testProcessCrash(t *testing.T, p Backend) {
	ctx := context.Background()
	target := p.Create(t)
	id := func() string {
		s := p.Open(t, target)
		defer s.Close()
		return fixture.ParkApproved(t, s, 1).ID
	}()
	c := startChild(t, t.Name()[:strings.LastIndex(t.Name(), "/")], "crash", target, 0, []string{id})
	_, err := c.await("consumed")
	require.NoError(t, err)
	require.NoError(t, c.cmd.Process.Kill()) // SIGKILL on Unix: no deferred code, no Close
	err = c.cmd.Wait()
	require.Error(t, err, "the child must have been killed")
	assert.False(t, c.cmd.ProcessState.Exited(), "the child died by signal, not by exit")

	s := p.Open(t, target)
	a, err := s.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, store.Executing, a.State, "the consume survived the crash")
	assert.Equal(t, "crash-key", a.IdempotencyKey, "with its idempotency key")
	assert.Equal(t, "gate-crash", a.Owner)
	assert.Empty(t, a.Result)
	assert.Equal(t, "consume", fixture.Last(t, s).Decision, "and its row")
	_, err = s.Consume(ctx, id, fixture.Claim("second-key", "gate-2", fixture.Now(t, s)), nil)
	assert.ErrorIs(t, err, store.ErrConsumed, "a crash never frees the approval for a second consume")

	for at := fixture.Now(t, s); at.Before(a.LeaseUntil); at = fixture.Now(t, s) {
		// One reading of the clock for the check and the claim: read
		// twice, the lease could end in between.
		_, err = s.Reclaim(ctx, id, 1, fixture.Claim("", "gate-2", at), nil)
		require.ErrorIs(t, err, store.ErrLeaseLive, "the crashed owner's lease is honoured until it ends")
		time.Sleep(crashLease / 10)
	}
	at := fixture.Now(t, s)
	rec, err := s.Expired(ctx, at, 0)
	require.NoError(t, err)
	require.Len(t, rec, 1, "the interrupted ticket is listed once its lease expired")
	assert.Equal(t, id, rec[0].ID)
	got, err := s.Reclaim(ctx, id, rec[0].Fence, fixture.Claim("", "gate-2", at), fixture.Note("reclaim"))
	require.NoError(t, err)
	assert.Equal(t, "crash-key", got.IdempotencyKey, "recovery re-runs with the same key")
	assert.Equal(t, int64(2), got.Fence)
	_, err = s.Finish(ctx, id, 2, store.Outcome{State: store.Done, Result: []byte(`"recovered"`), At: at}, fixture.Note("finish"))
	require.NoError(t, err, "recovery finishes the ticket")
	rec, err = s.Expired(ctx, at.Add(time.Hour), 0)
	require.NoError(t, err)
	assert.Empty(t, rec)
	fixture.Chain(t, s)
}

// checkProcessVotes checks the tickets racing processes voted on, read
// through s, a store opened after they ended: each holds the votes the
// processes were told were accepted, each approver at most once, one row
// each, and is approved, by its last vote, exactly when its votes reached
// its quorum; of approvers distinct approvers, all counted unless the
// quorum was reached first. It returns the number of accepted votes.
func checkProcessVotes(t *testing.T, s store.Store, quorums map[string]int, accepted map[string]map[string]int,
	refused map[string][]string, approvers int) int {
	t.Helper()
	rows := map[string]int{}
	for _, r := range fixture.Chain(t, s) {
		if r.Decision == "vote" {
			rows[r.TicketID]++
		}
	}
	total := 0
	for id, quorum := range quorums {
		a, err := s.Get(t.Context(), id)
		require.NoError(t, err)
		stored := map[string]int{}
		for _, v := range a.Votes {
			stored[v.Approver]++
		}
		for who, n := range stored {
			assert.Equal(t, 1, n, "ticket %s: %s holds one vote", id, who)
		}
		for who, n := range accepted[id] {
			assert.Equal(t, 1, n, "ticket %s: %s was accepted once", id, who)
		}
		if len(accepted[id]) > 0 || len(stored) > 0 {
			assert.Equal(t, accepted[id], stored, "ticket %s: the accepted votes, and only they, survive reopening", id)
		}
		assert.Equal(t, len(a.Votes), rows[id], "ticket %s: one row per accepted vote", id)
		total += len(a.Votes)
		if approvers >= quorum {
			assert.Equal(t, store.Approved, a.State, "ticket %s: the quorum %d was reachable", id, quorum)
			if assert.Len(t, a.Votes, quorum, "ticket %s: approved exactly at the quorum", id) {
				assert.Equal(t, a.Votes[quorum-1].Approver, a.Approver, "ticket %s: by the last vote", id)
			}
		} else {
			assert.Equal(t, store.Pending, a.State, "ticket %s: the quorum %d was out of reach", id, quorum)
			assert.Len(t, a.Votes, approvers, "ticket %s: every approver counted", id)
		}
		for _, r := range refused[id] {
			who, why, _ := strings.Cut(r, " ")
			switch why {
			case "duplicate":
				assert.Equal(t, "shared", who, "ticket %s: only the shared approver votes twice", id)
			case "resolved":
				assert.Equal(t, store.Approved, a.State, "ticket %s: refused as decided, so it was", id)
			}
		}
	}
	return total
}
