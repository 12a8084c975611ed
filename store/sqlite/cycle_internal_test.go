package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	asuaudit "github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/internal/cputime"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// row is a Note making a small audit record of the ticket it is given.
func row(decision string) store.Note {
	return func(a store.Approval, _ bool) asuaudit.Record {
		return asuaudit.Record{TicketID: a.ID, Session: a.Session, Tool: a.Tool, ArgsDigest: a.Digest,
			Decision: decision, Reason: string(a.State)}
	}
}

// cycle is one approval cycle: propose (park), approve, execute (consume
// and finish), with an audit row for each decision. separate writes each
// row in its own transaction after the state change, as the gate did
// before decisions and rows were one transaction (and without a row for
// the consume, which it did not write).
func cycle(ctx context.Context, s *Store, n int, at time.Time, separate bool) error {
	audit := func(a store.Approval, decision string) error {
		if !separate {
			return nil
		}
		_, err := s.AppendAudit(ctx, row(decision)(a, false))
		return err
	}
	note := func(decision string) store.Note {
		if separate {
			return nil
		}
		return row(decision)
	}
	a, _, err := s.Park(ctx, storetest.TicketAt(fmt.Sprintf("s%d", n), "u1", n, at), store.Caps{}, note("needs_approval"))
	if err != nil {
		return err
	}
	if err := audit(a, "needs_approval"); err != nil {
		return err
	}
	if a, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: "u1", At: at}, note("approved")); err != nil {
		return err
	}
	if err := audit(a, "approved"); err != nil {
		return err
	}
	claim := store.Claim{Key: "k", Owner: "gate-1", At: at, LeaseUntil: at.Add(time.Minute)}
	if a, err = s.Consume(ctx, a.ID, claim, note("executing")); err != nil {
		return err
	}
	if a, err = s.Finish(ctx, a.ID, a.Fence, store.Outcome{State: store.Done, At: at}, note("executed")); err != nil {
		return err
	}
	return audit(a, "executed")
}

// TestCommitsPerCycle counts the commits of an approval cycle: four, one
// per decision with its row, each waiting for the disk, where writing the
// rows separately took seven (and recorded no row for the consume); and
// one for an allowed call, stored approved with its row, where park,
// resolve and the row took three.
func TestCommitsPerCycle(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name     string
		separate bool
		commits  int64
		rows     int64
	}{
		{"one transaction per decision", false, 4, 4},
		{"rows written separately", true, 7, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
			before, durable := s.commits.Load(), s.durable.Load()
			require.NoError(t, cycle(ctx, s, 1, t0, c.separate))
			assert.Equal(t, c.commits, s.commits.Load()-before)
			assert.Equal(t, c.commits, s.durable.Load()-durable, "every decision waits for the disk")
			head, err := s.AuditHead(ctx)
			require.NoError(t, err)
			assert.Equal(t, c.rows, head.Seq)
		})
	}
	t.Run("allowed call", func(t *testing.T) {
		s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
		a := storetest.TicketAt("s1", "u1", 1, t0)
		a.State, a.Approver = store.Approved, "policy"
		before, durable := s.commits.Load(), s.durable.Load()
		_, _, err := s.Park(ctx, a, store.Caps{}, row("allow"))
		require.NoError(t, err)
		assert.Equal(t, int64(1), s.commits.Load()-before)
		assert.Equal(t, int64(1), s.durable.Load()-durable)
	})
}

// TestGateCycleCommits counts the commits of a whole approval through the
// gate on this store, as an approver and an agent make it (propose a call
// that needs approval, prompt, show, approve with a passkey, execute):
// seven, of which four wait for the disk: the store's own four (park,
// resolve, consume, finish, each with its audit row). The flood counts,
// the first showing and the passkey's sign count commit without waiting,
// and are made durable by the park and the approval that follow them.
func TestGateCycleCommits(t *testing.T) {
	ctx := t.Context()
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), &Options{Clock: time.Now})
	g, err := gate.New(s, stepuptest.SeedCatalog(), stepuptest.Passkeys(s), gate.WithDwell(0),
		gate.WithExecutor("send_email", plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			return []byte(`{}`), nil
		})))
	require.NoError(t, err)
	c := stepuptest.SendEmail("finance@example.com")
	auth, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(s), c.Principal.User)
	require.NoError(t, err)

	before, durable := s.commits.Load(), s.durable.Load()
	tk, err := g.Propose(ctx, c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	done, err := stepuptest.Approve(ctx, g.Desk(), auth, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, done.Status)
	_, err = g.Execute(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(7), s.commits.Load()-before, "commits")
	assert.Equal(t, int64(4), s.durable.Load()-durable, "commits that wait for the disk")

	head, err := s.AuditHead(ctx)
	require.NoError(t, err)
	a, err := s.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	assert.Equal(t, store.Done, a.State)
	assert.False(t, a.ShownAt.IsZero())
	assert.Positive(t, head.Seq)
}

// TestSignInCountWaitsForTheDisk: a sign-in's signature counter commits
// once and waits for the disk, since no decision follows it to make it
// durable; an approval's answer commits its counter without waiting, and
// the vote after it waits (TestGateCycleCommits).
func TestSignInCountWaitsForTheDisk(t *testing.T) {
	ctx := t.Context()
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), &Options{Clock: time.Now})
	auth, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(s), stepuptest.Approver)
	require.NoError(t, err)
	in, err := passkey.NewSignIn(stepuptest.Passkeys(s))
	require.NoError(t, err)
	opts, state, err := in.Begin(ctx)
	require.NoError(t, err)
	answer, err := auth.Assert(opts)
	require.NoError(t, err)

	before, durable := s.commits.Load(), s.durable.Load()
	who, err := in.Finish(ctx, state, answer)
	require.NoError(t, err)
	assert.Equal(t, stepuptest.Approver, who.User)
	assert.Equal(t, int64(1), s.commits.Load()-before, "commits")
	assert.Equal(t, int64(1), s.durable.Load()-durable, "commits that wait for the disk")
}

// BenchmarkCycle measures a whole approval cycle with each decision and
// its row in one transaction (one-tx-ns/cycle) against the same cycle with
// every row in a transaction of its own (separate-ns/cycle). The two run
// alternately, each on its own file, so that load from elsewhere on the
// machine falls on both alike; ratio is one-tx over separate, and
// one-tx-cpu-ns/cycle the process's CPU (user and system) per one-tx
// cycle.
func BenchmarkCycle(b *testing.B) {
	for _, relaxed := range []bool{false, true} {
		name := "sync=FULL"
		if relaxed {
			name = "sync=NORMAL"
		}
		b.Run(name, func(b *testing.B) {
			separate, one := benchStore(b, &Options{RelaxedSyncUnsafe: relaxed}), benchStore(b, &Options{RelaxedSyncUnsafe: relaxed})
			ctx := context.Background()
			var dSep, dOne, cpuOne time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := cycle(ctx, separate, i, start, true); err != nil {
					b.Fatal(err)
				}
				mid, cpu := time.Now(), cputime.Process()
				if err := cycle(ctx, one, i, mid, false); err != nil {
					b.Fatal(err)
				}
				cpuOne += cputime.Process() - cpu
				dSep += mid.Sub(start)
				dOne += time.Since(mid)
			}
			b.ReportMetric(float64(dSep.Nanoseconds())/float64(b.N), "separate-ns/cycle")
			b.ReportMetric(float64(dOne.Nanoseconds())/float64(b.N), "one-tx-ns/cycle")
			b.ReportMetric(float64(cpuOne.Nanoseconds())/float64(b.N), "one-tx-cpu-ns/cycle")
			b.ReportMetric(float64(dOne)/float64(dSep), "ratio")
		})
	}
}

// TestLostShowingRestartsDwell: a showing that a power loss undid (its
// commit did not wait for the disk and no decision followed it) counts
// as no showing. The gate then refuses the approval until the card is
// shown again, and the dwell counts from that new showing, so the loss
// only lengthens the approver's wait (store.Votes.Show).
func TestLostShowingRestartsDwell(t *testing.T) {
	ctx := t.Context()
	const dwell = 10 * time.Second
	clock := stepuptest.NewClock(stepuptest.Start())
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), &Options{Clock: clock.Now})
	g, err := gate.New(s, stepuptest.SeedCatalog(), stepuptest.Passkeys(s), gate.WithLocalClock(clock.Now),
		gate.WithDwell(dwell))
	require.NoError(t, err)
	c := stepuptest.SendEmail("finance@example.com")
	auth, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(s), c.Principal.User)
	require.NoError(t, err)
	tk, err := g.Propose(ctx, c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	desk := g.Desk()
	answer := func() []byte {
		p, err := desk.Prompt(ctx, tk.ID)
		require.NoError(t, err)
		a, err := auth.Assert(p.Options)
		require.NoError(t, err)
		return a
	}

	require.NoError(t, desk.Show(ctx, tk.ID))
	// The power loss: the showing is gone, as if never made.
	_, err = s.db.ExecContext(ctx, `UPDATE approvals SET shown_at = NULL WHERE id = ?`, string(tk.ID))
	require.NoError(t, err)
	clock.Advance(dwell + time.Second)
	_, err = desk.Approve(ctx, tk.ID, answer())
	require.ErrorIs(t, err, stepup.ErrTooFast, "a lost showing is no showing")

	require.NoError(t, desk.Show(ctx, tk.ID)) // the approver's page shows the card again
	clock.Advance(dwell / 2)
	_, err = desk.Approve(ctx, tk.ID, answer())
	require.ErrorIs(t, err, stepup.ErrTooFast, "the dwell counts from the new showing")

	clock.Advance(dwell)
	done, err := desk.Approve(ctx, tk.ID, answer())
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, done.Status)
}

// BenchmarkCycleWorkers is BenchmarkCycle's one-transaction cycle run by
// 16 workers at once on one file: ns/op is the wall time per cycle, the
// inverse of cycles per second.
func BenchmarkCycleWorkers(b *testing.B) {
	s := benchStore(b, nil)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := int(next.Add(1))
			if err := cycle(ctx, s, n, time.Now(), false); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
