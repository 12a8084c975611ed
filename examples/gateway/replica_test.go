package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/sqlite"
)

// run is one executor run: which replica, which ticket, which key.
type execRun struct {
	replica, key string
	at           time.Time
}

// runs records the executions of every replica in a test.
type runs struct {
	mu   sync.Mutex
	list []execRun
}

func (r *runs) add(x execRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, x)
}

func (r *runs) all() []execRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]execRun(nil), r.list...)
}

// replicaExec is a replica's executor: it records each run and, while
// block is open, holds the run, whatever its context says: a replica
// killed mid-execution neither finishes nor records anything.
type replicaExec struct {
	name    string
	runs    *runs
	block   chan struct{} // nil: return at once
	started chan string   // receives the key of a blocked run
}

func (e *replicaExec) Execute(ctx context.Context, eff canon.Effect, key string) ([]byte, error) {
	e.runs.add(execRun{replica: e.name, key: key, at: time.Now()})
	if e.block != nil {
		e.started <- key
		<-e.block
	}
	return json.Marshal(map[string]string{"ran_on": e.name})
}

// replicaSet is two gateways on one SQLite file, sharing the gate key and
// the tokens file, on one store clock.
type replicaSet struct {
	dir, db    string
	clock      *stepuptest.Clock
	runs       *runs
	a, b       *gatewayProc
	execA      *replicaExec
	token      string
	clientA, B *remote.Client
	once       sync.Once
}

const testLease = 6 * time.Second // the shortest gate.WithLease allows

func newReplicas(t *testing.T) *replicaSet {
	t.Helper()
	dir := t.TempDir()
	rs := &replicaSet{dir: dir, db: filepath.Join(dir, "asu.db"), clock: stepuptest.NewClock(time.Now()), runs: &runs{}}
	rs.execA = &replicaExec{name: "a", runs: rs.runs, block: make(chan struct{}), started: make(chan string, 1)}
	opts := func(name string, exec *replicaExec) options {
		return options{db: rs.db, files: dir, keyFile: filepath.Join(dir, "gate.key"),
			tokens: filepath.Join(dir, "tokens.json"), instance: name, clock: rs.clock.Now, exec: exec,
			lease: testLease, maintainEvery: 20 * time.Millisecond}
	}
	rs.a = startGateway(t, opts("a", rs.execA))
	rs.b = startGateway(t, opts("b", &replicaExec{name: "b", runs: rs.runs}))
	require.NotEmpty(t, rs.a.Token, "the first replica made the token")
	require.Empty(t, rs.b.Token, "the second one found it in the tokens file")
	rs.token = rs.a.Token
	var err error
	rs.clientA, err = remote.NewClient(rs.a.AgentURL, rs.token, nil)
	require.NoError(t, err)
	rs.B, err = remote.NewClient(rs.b.AgentURL, rs.token, nil)
	require.NoError(t, err)
	t.Cleanup(func() { rs.release() })
	return rs
}

// withUser returns c acting for user.
func withUser(c stepup.Call, user string) stepup.Call {
	c.Principal.User = user
	return c
}

// release lets a's blocked executor return; releasing twice is fine.
func (rs *replicaSet) release() {
	rs.once.Do(func() { close(rs.execA.block) })
}

func readCall(path string) stepup.Call {
	return stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"` + path + `"}`), Task: "t-1", Session: "sess-1",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
}

// TestReplicasShareAllowedCalls: a call the policy allowed on one replica
// executes on the other, because they share the gate key; a replica
// started without the key file refuses it (the MAC does not verify), so
// the shared key is what makes it work.
func TestReplicasShareAllowedCalls(t *testing.T) {
	ctx := context.Background()
	rs := newReplicas(t)
	for i := range 3 {
		tk, err := rs.clientA.Propose(ctx, readCall("q3.csv"))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusAllowed, tk.Status)
		res, err := rs.B.Execute(ctx, tk.ID)
		require.NoError(t, err, "allowed on a, executed on b (%d)", i)
		assert.JSONEq(t, `{"ran_on":"b"}`, string(res.Output))
		_, err = rs.clientA.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrConsumed, "and never again, on any replica")
	}

	// A replica without the shared key cannot run what a allowed.
	c := startGateway(t, options{db: rs.db, files: rs.dir, tokens: filepath.Join(rs.dir, "tokens.json"),
		instance: "c", clock: rs.clock.Now, exec: &replicaExec{name: "c", runs: rs.runs}})
	clientC, err := remote.NewClient(c.AgentURL, rs.token, nil)
	require.NoError(t, err)
	tk, err := rs.clientA.Propose(ctx, readCall("q3.csv"))
	require.NoError(t, err)
	_, err = clientC.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrBadAssertion, "another key: the gate's MAC does not verify")
	for _, r := range rs.runs.all() {
		assert.NotEqual(t, "c", r.replica)
	}
}

// TestReplicaKilledMidExecution: replica a dies while its executor runs
// (its maintenance and listeners stop, the runtime's request is
// cancelled); once its lease has expired on the store's clock, replica b's
// continuous recovery takes the execution over and finishes it with the
// same idempotency key, without anyone restarting anything. a's late
// outcome is fenced off: the ticket records b's, once.
func TestReplicaKilledMidExecution(t *testing.T) {
	ctx := context.Background()
	rs := newReplicas(t)
	tk, err := rs.clientA.Propose(ctx, readCall("q3.csv"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)

	answered := make(chan error, 1)
	go func() {
		_, err := rs.clientA.Execute(ctx, tk.ID)
		answered <- err
	}()
	var key string
	select {
	case key = <-rs.execA.started:
	case <-time.After(10 * time.Second):
		t.Fatal("a never ran the call")
	}
	got, err := rs.B.Wait(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusExecuting, got.Status)

	// a dies: its context ends, so its maintenance and listeners stop; its
	// executor is stuck and its lease is no longer renewed in time.
	rs.a.cancel()
	time.Sleep(200 * time.Millisecond)
	got, err = rs.B.Wait(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusExecuting, got.Status, "b never takes over a live lease")
	// A replica starting now, next to a live execution, starts and leaves it be.
	c := startGateway(t, options{db: rs.db, files: rs.dir, keyFile: filepath.Join(rs.dir, "gate.key"),
		tokens: filepath.Join(rs.dir, "tokens.json"), instance: "c", clock: rs.clock.Now,
		exec: &replicaExec{name: "c", runs: rs.runs}, lease: testLease, maintainEvery: 20 * time.Millisecond})
	time.Sleep(100 * time.Millisecond)
	got, err = rs.B.Wait(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusExecuting, got.Status, "nor does a replica starting up")
	c.stop(t)

	// Time passes: a's lease runs out, and b watches it stay unrenewed
	// for a lease of its own (simulated) time before taking it over.
	rs.clock.Advance(testLease + time.Second)
	require.Eventually(t, func() bool {
		rs.clock.Advance(testLease / 8)
		got, err = rs.B.Wait(ctx, tk.ID)
		return err == nil && got.Status == stepup.StatusExecuted
	}, 10*time.Second, 20*time.Millisecond, "b's recovery finishes the ticket")

	// a's stuck executor comes back late: its outcome is fenced off, and
	// its runtime is told the outcome is unknown, never that it ran.
	rs.release()
	select {
	case err := <-answered:
		assert.ErrorIs(t, err, stepup.ErrOutcomeUnknown)
	case <-time.After(10 * time.Second):
		t.Fatal("a's execute never ended")
	}
	rs.a.stop(t)

	runs := rs.runs.all()
	require.Len(t, runs, 2)
	assert.Equal(t, "a", runs[0].replica)
	assert.Equal(t, "b", runs[1].replica)
	assert.Equal(t, key, runs[1].key, "re-run with the same idempotency key")

	rs.b.stop(t)
	st, err := sqlite.Open(ctx, rs.db, nil)
	require.NoError(t, err)
	defer st.Close()
	head, err := st.AuditHead(ctx)
	require.NoError(t, err)
	records, err := st.AuditSeq(ctx, 1, uint64(head.Seq)+1)
	require.NoError(t, err)
	require.NoError(t, audit.VerifyChain(records, canon.Digest{}))
	decisions := map[string]int{}
	for _, r := range records {
		if r.TicketID == string(tk.ID) {
			decisions[r.Decision]++
		}
	}
	assert.Equal(t, map[string]int{audit.DecisionAllow: 1, audit.DecisionExecuting: 1,
		audit.DecisionReclaimed: 1, audit.DecisionExecuted: 1}, decisions, "one outcome, b's")
}
