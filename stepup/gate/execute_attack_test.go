package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store/sqlite"
)

// fixedApprover answers every request in the name of user, and rechecks
// nothing: the gate alone decides who may approve and that a ticket runs
// once, which is what these tests attack.
type fixedApprover struct{ user string }

func (fixedApprover) Options(context.Context, plug.Request) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func (a fixedApprover) Verify(context.Context, plug.Request, []byte) (plug.Verified, error) {
	return plug.Verified{User: a.user, Evidence: []byte(`{"verdict":"approve"}`)}, nil
}

func (fixedApprover) Recheck(context.Context, plug.Answer) error { return nil }

// countingExecutor counts the runs of every gate it is given to.
type countingExecutor struct{ runs atomic.Int64 }

func (x *countingExecutor) Execute(context.Context, canon.Effect, string) ([]byte, error) {
	x.runs.Add(1)
	time.Sleep(time.Millisecond) // widen the window a second run would need
	return []byte(`{"sent":true}`), nil
}

// sqliteGates opens n gates, each on its own handle of one SQLite file,
// sharing the gate key and one executor.
func sqliteGates(t *testing.T, n int, exec *countingExecutor) []*gate.Gate {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "asu.db")
	cat, err := policy.NewCatalog("exec-attack-1",
		policy.Tool{Name: "send_email", Title: "Send e-mail", Class: card.ClassExternal},
		policy.Tool{Name: "read_file", Title: "Read a file", Class: card.ClassRead})
	require.NoError(t, err)
	key := []byte("0123456789abcdef0123456789abcdef")
	var gates []*gate.Gate
	for i := range n {
		st, err := sqlite.Open(ctx, path, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		g, err := gate.New(st, cat, fixedApprover{"user:dana"}, gate.WithKey(key), gate.WithDwell(0),
			gate.WithInstance(fmt.Sprintf("replica-%d", i)), gate.WithoutFloodControlUnsafe(),
			gate.WithExecutor("send_email", exec), gate.WithExecutor("read_file", exec))
		require.NoError(t, err)
		gates = append(gates, g)
	}
	return gates
}

// TestExecuteOnceAcrossSQLiteGates: three gates on one SQLite file race to
// execute each approved ticket (by a person or by the policy), while
// recovery runs on every gate and, in some rounds, an operator revokes the
// approval or the runtime cancels it. Each ticket runs at most once,
// exactly one Execute succeeds when it runs, and a revocation that
// succeeded means nothing ran.
func TestExecuteOnceAcrossSQLiteGates(t *testing.T) {
	ctx := context.Background()
	exec := &countingExecutor{}
	gates := sqliteGates(t, 3, exec)
	for round := range 8 {
		tool, args := "send_email", fmt.Sprintf(`{"to":"finance@example.com","n":%d}`, round)
		if round%2 == 1 {
			tool = "read_file"
		}
		before := exec.runs.Load()
		tk, err := gates[0].Propose(ctx, stepup.Call{Tool: tool, Args: json.RawMessage(args), Task: "t-exec",
			Step: fmt.Sprint(round), Session: fmt.Sprintf("s-%d", round),
			Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		require.NoError(t, err)
		if tk.Status == stepup.StatusPending {
			tk, err = gates[round%3].Desk().Approve(ctx, tk.ID, []byte(`yes`))
			require.NoError(t, err)
		}
		require.True(t, tk.Status.Runnable(), "round %d: %s", round, tk.Status)

		var (
			wg        sync.WaitGroup
			start     = make(chan struct{})
			succeeded atomic.Int64
			revoked   atomic.Bool
		)
		for i := range 12 {
			wg.Go(func() {
				<-start
				if _, err := gates[i%3].Execute(ctx, tk.ID); err == nil {
					succeeded.Add(1)
				}
			})
		}
		for _, g := range gates {
			wg.Go(func() {
				<-start
				_, _ = g.Recover(ctx)
			})
		}
		if round%4 == 2 {
			wg.Go(func() {
				<-start
				if _, err := gates[2].Admin().RevokeTicket(ctx, tk.ID, "user:ops", "race"); err == nil {
					revoked.Store(true)
				}
			})
		}
		close(start)
		wg.Wait()
		runs := exec.runs.Load() - before
		assert.LessOrEqual(t, runs, int64(1), "round %d: ran %d times", round, runs)
		assert.Equal(t, runs, succeeded.Load(), "round %d: successes match runs", round)
		if revoked.Load() {
			assert.Zero(t, runs, "round %d: revoked and ran", round)
		}
		// Afterwards nothing runs it again, on any gate.
		for _, g := range gates {
			_, err := g.Execute(ctx, tk.ID)
			assert.Error(t, err)
			_, _ = g.Recover(ctx)
		}
		assert.Equal(t, runs, exec.runs.Load()-before, "round %d", round)
	}
}

// TestExecuteAfterCancel: a ticket the runtime withdrew never runs, on any
// gate, whether the cancel or an approval on another gate came first, and
// never both win.
func TestExecuteAfterCancel(t *testing.T) {
	ctx := context.Background()
	exec := &countingExecutor{}
	gates := sqliteGates(t, 2, exec)
	for round := range 6 {
		tk, err := gates[0].Propose(ctx, stepup.Call{Tool: "send_email",
			Args: json.RawMessage(fmt.Sprintf(`{"to":"x@example.com","n":%d}`, round)), Step: fmt.Sprint(round),
			Session: fmt.Sprintf("c-%d", round), Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		var wg sync.WaitGroup
		var cancelled, approved atomic.Bool
		wg.Go(func() {
			if _, err := gates[round%2].Cancel(ctx, tk.ID, "withdrawn"); err == nil {
				cancelled.Store(true)
			}
		})
		wg.Go(func() {
			if _, err := gates[(round+1)%2].Desk().Approve(ctx, tk.ID, []byte(`yes`)); err == nil {
				approved.Store(true)
			}
		})
		wg.Wait()
		assert.False(t, cancelled.Load() && approved.Load(), "round %d: both cancel and approve won", round)
		_, err = gates[1].Execute(ctx, tk.ID)
		if cancelled.Load() {
			assert.Error(t, err, "round %d: a withdrawn ticket ran", round)
		}
	}
	assert.LessOrEqual(t, exec.runs.Load(), int64(6))
}
