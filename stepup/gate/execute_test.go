package gate_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

func TestExecuteOnceUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk := approved(t, w, sendEmail("finance@example.com"))
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = w.Gate.Execute(ctx, tk.ID)
		}()
	}
	close(start)
	wg.Wait()
	ok, used := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, stepup.ErrConsumed):
			used++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, n-1, used)
	assert.Equal(t, 1, w.Exec.Count())
}

func TestAllowedCallsRunOnceToo(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk, err := w.Gate.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)
	_, err = w.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrConsumed)
	got, err := w.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusExecuted, got.Status)
}

func TestExecuteRefusals(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	_, err := w.Gate.Execute(ctx, "no-such-ticket")
	assert.ErrorIs(t, err, stepup.ErrNotFound)
	pending := pending(t, w, "finance@example.com")
	_, err = w.Gate.Execute(ctx, pending)
	assert.ErrorIs(t, err, stepup.ErrNotApproved)
	_, err = w.Deny(pending, "not today")
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, pending)
	assert.ErrorIs(t, err, stepup.ErrNotApproved)
	got, err := w.Gate.Wait(ctx, pending)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, got.Status)
	assert.Contains(t, got.Reason, "not today")
	assert.Equal(t, 0, w.Exec.Count())
}

func TestExecuteWithoutExecutorKeepsTheApproval(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = h.Approve(tk.ID)
	require.NoError(t, err)
	_, err = h.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrNoExecutor)
	got, err := h.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status, "not consumed")
}

// crashOnce kills its gate (see dying) and panics inside the first
// execution, after the gate consumed the approval: the process died
// between consume and the tool's return.
type crashOnce struct {
	recorder
	mu      sync.Mutex
	crashed bool
	keySeen string
	kill    func() // the dying gate's
}

func (c *crashOnce) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	c.mu.Lock()
	if !c.crashed {
		c.crashed, c.keySeen = true, key
		kill := c.kill
		c.mu.Unlock()
		kill()
		panic("process killed")
	}
	c.mu.Unlock()
	return c.recorder.Execute(ctx, e, key)
}

// recoverScenario runs the crash-and-recover sequence on st: a first gate
// crashes inside the executor, a second gate on the same store recovers.
func recoverScenario(t *testing.T, clock *stepuptest.Clock, st store.Store, reopen func() store.Store) {
	t.Helper()
	ctx := context.Background()
	first := &dying{Store: st}
	exec := &crashOnce{kill: first.kill}
	key := []byte("the key both gates of one store share!")
	g1, err := gate.New(first, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithExecutor("write_draft", exec),
		gate.WithKey(key), gate.WithLocalClock(clock.Now))
	require.NoError(t, err)
	tk, err := g1.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)
	_, err = g1.Execute(ctx, tk.ID)
	require.ErrorIs(t, err, stepup.ErrOutcomeUnknown, "the gate died inside the executor")
	require.NotEmpty(t, exec.keySeen)

	st = reopen()
	g2, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithExecutor("write_draft", exec),
		gate.WithKey(key), gate.WithLocalClock(clock.Now))
	require.NoError(t, err)
	got, err := g2.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusExecuting, got.Status)
	_, err = g2.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrConsumed, "an interrupted execution is never consumed again")

	results, err := g2.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, results, "the crashed owner's lease is still live: nothing is taken over")
	clock.Advance(gate.DefaultLease)
	results, err = g2.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, results, "expired by the store's clock: g2 starts watching it for renewals")
	clock.Advance(gate.DefaultLease)
	results, err = g2.Recover(ctx)
	require.NoError(t, err)
	require.Len(t, results, 1)
	assert.Equal(t, exec.keySeen, results[0].IdempotencyKey)
	assert.Equal(t, []string{exec.keySeen}, exec.Keys(), "re-run once, with the same key")

	results, err = g2.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, results, "nothing left to recover")
	got, err = g2.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusExecuted, got.Status)
	assert.Equal(t, 1, exec.Count())
}

func TestCrashBetweenConsumeAndReturnRecoversOnce(t *testing.T) {
	h := stepuptest.NewGate(t, nil)
	recoverScenario(t, h.Clock, h.Store, func() store.Store { return h.Store })
}

func TestRecoverDoesNotRunAChangedEffect(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk := approved(t, w, sendEmail("finance@example.com"))
	_, err := w.Store.Consume(ctx, string(tk.ID), store.Claim{Key: "key-1", Owner: "a-crashed-gate",
		At: w.Clock.Now(), LeaseUntil: w.Clock.Now().Add(time.Second)}, nil)
	require.NoError(t, err)
	w.Clock.Advance(time.Second)
	require.NoError(t, writeFile(w.Dir, "q3.csv", "changed while the gate was down\n"))
	watchExpired(t, w.Clock, gate.DefaultLease, w.Gate)
	results, err := w.Gate.Recover(ctx)
	assert.ErrorIs(t, err, stepup.ErrEffectChanged)
	assert.Empty(t, results)
	assert.Equal(t, 0, w.Exec.Count())
	a, err := w.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	assert.Equal(t, store.Abandoned, a.State)
	got, err := w.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusAbandoned, got.Status, "abandoned, not executed")
	assert.True(t, got.Status.Final())
}

func TestWaitWakesOnDecision(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	id := pending(t, w, "finance@example.com")
	done := make(chan stepup.Ticket)
	go func() {
		got, err := w.Gate.Wait(ctx, id)
		assert.NoError(t, err)
		done <- got
	}()
	_, err := w.Approve(id)
	require.NoError(t, err)
	got := <-done
	assert.Equal(t, stepup.StatusApproved, got.Status)

	other := pending(t, w, "finance@example.org")
	wctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	got, err = w.Gate.Wait(wctx, other)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, stepup.StatusPending, got.Status)
}

// TestExecuteStatusesTellOutcomesApart: executed, failed and abandoned are
// distinct statuses, and each is final.
func TestExecuteStatusesTellOutcomesApart(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil, gate.WithExecutor("write_draft", &recorder{}),
		gate.WithExecutor("issue_refund", plug.ExecutorFunc(
			func(context.Context, canon.Effect, string) ([]byte, error) { return nil, errors.New("card declined") })))
	w := &world{Harness: h}
	ok, err := w.Gate.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, ok.ID)
	require.NoError(t, err)
	failed := approved(t, w, stepup.Call{Tool: "issue_refund", Args: []byte(`{"order":"A-1","amount":5}`),
		Session: "s", Principal: agentFor("user:dana")})
	_, err = w.Gate.Execute(ctx, failed.ID)
	require.ErrorIs(t, err, stepup.ErrExecutorFailed)
	for id, want := range map[stepup.TicketID]stepup.Status{ok.ID: stepup.StatusExecuted, failed.ID: stepup.StatusFailed} {
		got, err := w.Gate.Ticket(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, want, got.Status)
		assert.True(t, got.Status.Final())
	}
}

// watchExpired has gates see the executions whose leases expired, then
// lets a lease of their own clock pass with no renewal: what Recover
// waits for before it takes an execution over.
func watchExpired(t testing.TB, clock *stepuptest.Clock, lease time.Duration, gates ...*gate.Gate) {
	t.Helper()
	for _, g := range gates {
		results, err := g.Recover(context.Background())
		require.NoError(t, err)
		require.Empty(t, results, "a first sighting takes nothing over")
	}
	clock.Advance(lease)
}
