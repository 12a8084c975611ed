package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// errInjected is the failure a faultStore injects.
var errInjected = errors.New("injected store failure")

// faultStore is a store whose nth call of a method that writes or reads a
// decision fails: before the call reaches the store (nothing written), or
// after it (written, but the answer is lost, as when a connection drops
// after the commit).
type faultStore struct {
	*memory.Store
	mu    sync.Mutex
	calls int
	nth   int
	after bool
	hit   bool
}

// fail reports whether this call is the one to fail.
func (f *faultStore) fail() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls == f.nth {
		f.hit = true
		return true
	}
	return false
}

// wrap runs call, failing it when its turn comes.
func wrap[T any](f *faultStore, call func() (T, error)) (T, error) {
	if !f.fail() {
		return call()
	}
	var zero T
	if f.after {
		_, _ = call()
	}
	return zero, errInjected
}

func (f *faultStore) Now(ctx context.Context) (time.Time, error) {
	return wrap(f, func() (time.Time, error) { return f.Store.Now(ctx) })
}

func (f *faultStore) Get(ctx context.Context, id string) (store.Approval, error) {
	return wrap(f, func() (store.Approval, error) { return f.Store.Get(ctx, id) })
}

func (f *faultStore) Park(ctx context.Context, a store.Approval, c store.Caps, n store.Note) (store.Approval, bool, error) {
	var merged bool
	t, err := wrap(f, func() (store.Approval, error) {
		t, m, err := f.Store.Park(ctx, a, c, n)
		merged = m
		return t, err
	})
	return t, merged, err
}

func (f *faultStore) Resolve(ctx context.Context, id string, r store.Resolution, n store.Note) (store.Approval, error) {
	return wrap(f, func() (store.Approval, error) { return f.Store.Resolve(ctx, id, r, n) })
}

func (f *faultStore) Consume(ctx context.Context, id string, c store.Claim, n store.Note) (store.Approval, error) {
	return wrap(f, func() (store.Approval, error) { return f.Store.Consume(ctx, id, c, n) })
}

func (f *faultStore) Finish(ctx context.Context, id string, fence int64, o store.Outcome, n store.Note) (store.Approval, error) {
	return wrap(f, func() (store.Approval, error) { return f.Store.Finish(ctx, id, fence, o, n) })
}

func (f *faultStore) Reclaim(ctx context.Context, id string, fence int64, c store.Claim, n store.Note) (store.Approval, error) {
	return wrap(f, func() (store.Approval, error) { return f.Store.Reclaim(ctx, id, fence, c, n) })
}

func (f *faultStore) ExpirePending(ctx context.Context, now time.Time, n store.Note) ([]store.Approval, error) {
	return wrap(f, func() ([]store.Approval, error) { return f.Store.ExpirePending(ctx, now, n) })
}

func (f *faultStore) AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error) {
	return wrap(f, func() (audit.Record, error) { return f.Store.AppendAudit(ctx, r) })
}

func (f *faultStore) ParkGranted(ctx context.Context, a store.Approval, id string, n store.Note) (store.Approval, store.Grant, error) {
	var g store.Grant
	t, err := wrap(f, func() (store.Approval, error) {
		t, gr, err := f.Store.ParkGranted(ctx, a, id, n)
		g = gr
		return t, err
	})
	return t, g, err
}

// decisionOf is the audit decision that puts a ticket in state s.
var decisionOf = map[store.State][]string{
	store.Pending:   {audit.DecisionNeedsApproval},
	store.Approved:  {audit.DecisionApproved, audit.DecisionAllow},
	store.Denied:    {audit.DecisionDenied},
	store.Expired:   {audit.DecisionExpired},
	store.Cancelled: {audit.DecisionCancelled},
	store.Revoked:   {audit.DecisionRevoked},
	store.Executing: {audit.DecisionExecuting, audit.DecisionReclaimed},
	store.Done:      {audit.DecisionExecuted},
	store.Failed:    {audit.DecisionFailed},
	store.Abandoned: {audit.DecisionAbandoned},
}

// faultRun is one pass of the reference flow against a store that fails
// its nth call, recording what the gate said and what ran.
type faultRun struct {
	st   *memory.Store
	exec *stepuptest.Recorder
	// claims are what the gate told its callers, checked against the store.
	executedOK []stepup.TicketID // Execute returned nil
	notRun     map[stepup.TicketID]int
	approvedOK []stepup.TicketID
	unknown    int // Executes that said the outcome is unknown
}

func runWithFault(t *testing.T, nth int, after bool) (*faultRun, bool) {
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	fs := &faultStore{Store: st, nth: nth, after: after}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "q3.csv"), []byte(stepuptest.Q3), 0o600))
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	require.NoError(t, err)
	exec := &stepuptest.Recorder{}
	opts := []gate.Option{gate.WithResolver(canon.FileResolver{Root: dir}), gate.WithoutFloodControlUnsafe()}
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, exec))
	}
	g, err := gate.New(fs, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), append([]gate.Option{gate.WithDwell(0)}, opts...)...)
	require.NoError(t, err)
	run := &faultRun{st: st, exec: exec, notRun: map[stepup.TicketID]int{}}

	execute := func(id stepup.TicketID) {
		before := exec.Count()
		_, err := g.Execute(ctx, id)
		switch {
		case err == nil:
			run.executedOK = append(run.executedOK, id)
		case errors.Is(err, stepup.ErrOutcomeUnknown):
			run.unknown++
		case errors.Is(err, stepup.ErrExecutorFailed):
		default:
			// "not run": this call must not have run the tool.
			assert.Equal(t, before, exec.Count(), "Execute said not run (%v) but the tool ran", err)
		}
	}
	desk := g.Desk()
	// a call a person approves, runs, and is asked to run again
	if tk, err := g.Propose(ctx, stepuptest.SendEmail("finance@example.com")); err == nil && tk.Status == stepup.StatusPending {
		if got, err := stepuptest.Approve(ctx, desk, dana, tk.ID); err == nil {
			require.Equal(t, stepup.StatusApproved, got.Status)
			run.approvedOK = append(run.approvedOK, tk.ID)
		}
		execute(tk.ID)
		execute(tk.ID)
	}
	// a call the policy allows
	if tk, err := g.Propose(ctx, stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Session: "sess-1", Principal: agentFor("user:dana")}); err == nil && tk.Status == stepup.StatusAllowed {
		execute(tk.ID)
	}
	// a call a person denies
	if tk, err := g.Propose(ctx, stepuptest.SendEmail("ops@example.com")); err == nil && tk.Status == stepup.StatusPending {
		_, _ = stepuptest.Deny(ctx, desk, dana, tk.ID, "no")
		execute(tk.ID)
	}
	// an approval revoked before it runs
	if tk, err := g.Propose(ctx, stepuptest.SendEmail("cfo@example.com")); err == nil && tk.Status == stepup.StatusPending {
		if _, err := stepuptest.Approve(ctx, desk, dana, tk.ID); err == nil {
			_, _ = g.Admin().RevokeTicket(ctx, tk.ID, "user:ops", "")
		}
		execute(tk.ID)
	}
	// a call nobody decides, and a denied one
	if tk, err := g.Propose(ctx, stepuptest.SendEmail("board@example.com")); err == nil && tk.Status == stepup.StatusPending {
		clock.Advance(gate.DefaultTTL + time.Second)
		_, _ = g.Sweep(ctx)
		execute(tk.ID)
	}
	_, _ = g.Propose(ctx, stepup.Call{Tool: "format_disk", Args: json.RawMessage(`{}`), Session: "s", Principal: agentFor("user:dana")})
	// recovery of anything left executing
	clock.Advance(time.Hour)
	_, _ = g.Recover(ctx)
	return run, fs.hit
}

// TestStoreFailuresLeaveNoDecisionWithoutItsRow drives the reference
// flow (approve, run, run again, allow, deny, revoke, time out, deny by
// policy, recover) against a store whose nth call fails, for every n,
// with the failure before the store is reached and after it wrote (the
// answer lost). After each run: nothing panicked, the chain verifies,
// every stored ticket's state has the audit row of the decision that put
// it there, every ticket the gate said it ran ran exactly once, no
// ticket ran twice, and an Execute that said "not run" ran nothing.
func TestStoreFailuresLeaveNoDecisionWithoutItsRow(t *testing.T) {
	ctx := context.Background()
	for _, after := range []bool{false, true} {
		for nth := 1; ; nth++ {
			var hit bool
			ok := t.Run(fmt.Sprintf("after=%v/call-%d", after, nth), func(t *testing.T) {
				run, h := runWithFault(t, nth, after)
				hit = h
				rows, err := run.st.AuditSeq(ctx, 0, 1<<62)
				require.NoError(t, err)
				require.NoError(t, audit.VerifyChain(rows, canon.Digest{}))
				byTicket := map[string][]string{}
				for _, r := range rows {
					byTicket[r.TicketID] = append(byTicket[r.TicketID], r.Decision)
				}
				page, _, err := run.st.List(ctx, store.Filter{Limit: store.MaxListLimit})
				require.NoError(t, err)
				for _, a := range page {
					found := false
					for _, d := range decisionOf[a.State] {
						for _, got := range byTicket[a.ID] {
							found = found || got == d
						}
					}
					assert.True(t, found, "ticket %s is %s with no %v row (rows %v)", a.ID, a.State, decisionOf[a.State], byTicket[a.ID])
				}
				for _, id := range run.executedOK {
					a, err := run.st.Get(ctx, string(id))
					require.NoError(t, err)
					assert.Equal(t, store.Done, a.State, "Execute returned success")
				}
				// One ticket, one key: a re-run uses the same key, and only
				// after the gate said the outcome was unknown.
				keysOf := map[string]map[string]bool{}
				runsOf := map[string]int{}
				for i, e := range run.exec.Runs() {
					raw, err := e.Canonical()
					require.NoError(t, err)
					if keysOf[string(raw)] == nil {
						keysOf[string(raw)] = map[string]bool{}
					}
					keysOf[string(raw)][run.exec.Keys()[i]] = true
					runsOf[string(raw)]++
				}
				for eff, keys := range keysOf {
					assert.Len(t, keys, 1, "one approval spent twice: %s", eff)
					if runsOf[eff] > 1 {
						assert.Positive(t, run.unknown, "a call ran again though the gate never said its outcome was unknown")
					}
				}
			})
			_ = ok
			if !hit {
				break // the flow no longer reaches the nth call
			}
		}
	}
}

// TestFaultFlowRunsWithoutFaults is the fault campaign's baseline: with
// no failure injected, its flow runs the approved and the allowed call,
// so the campaign's checks have something to bite on.
func TestFaultFlowRunsWithoutFaults(t *testing.T) {
	run, hit := runWithFault(t, 0, false)
	assert.False(t, hit)
	assert.Len(t, run.executedOK, 2)
	assert.Len(t, run.approvedOK, 1)
	assert.Equal(t, 2, run.exec.Count())
}
