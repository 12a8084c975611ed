package gate_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/stepup/watermark"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
)

// restoreWorld is a gate on a SQLite file with its watermark beside it,
// which a test backs up, runs, restores and restarts as an operator would.
// The tool (exec) outlives every restart, as a real tool does.
type restoreWorld struct {
	t           *testing.T
	dir, db     string
	key         []byte
	clock       *stepuptest.Clock
	watermarked bool

	st   *sqlite.Store
	keep *watermark.File
	g    *gate.Gate
	exec *stepuptest.Recorder
	auth *stepuptest.Authenticator
	n    int
}

func newRestoreWorld(t *testing.T, watermarked bool) *restoreWorld {
	dir := t.TempDir()
	w := &restoreWorld{t: t, dir: dir, db: filepath.Join(dir, "asu.db"), key: []byte("the gate key of the restore drill!!"),
		clock: stepuptest.NewClock(stepuptest.Start()), watermarked: watermarked, exec: &stepuptest.Recorder{}}
	w.open()
	enroll, err := passkey.NewEnrollment(w.st, stepuptest.RP(), passkey.WithClock(w.clock.Now),
		passkey.WithSealKey(stepuptest.SealKey()))
	require.NoError(t, err)
	w.auth, err = stepuptest.Enroll(t.Context(), enroll, stepuptest.Approver)
	require.NoError(t, err)
	t.Cleanup(w.close)
	return w
}

func (w *restoreWorld) open() {
	t := w.t
	var err error
	w.st, err = sqlite.Open(t.Context(), w.db, &sqlite.Options{Clock: w.clock.Now})
	require.NoError(t, err)
	opts := []gate.Option{gate.WithKey(w.key), gate.WithDwell(0), gate.WithLocalClock(w.clock.Now),
		gate.WithExecutor("write_draft", w.exec), gate.WithExecutor("send_email", w.exec)}
	if w.watermarked {
		w.keep, err = watermark.OpenFile(w.db + ".mark")
		require.NoError(t, err)
		opts = append(opts, gate.WithWatermark(w.keep))
	}
	w.g, err = gate.New(w.st, stepuptest.SeedCatalog(), stepuptest.Passkeys(w.st), opts...)
	require.NoError(t, err)
}

func (w *restoreWorld) close() {
	if w.st != nil {
		_ = w.st.Close()
		w.st = nil
	}
	if w.keep != nil {
		_ = w.keep.Close()
		w.keep = nil
	}
}

// backup takes a cold copy of the database (the store closed, so its
// write-ahead log is folded in), and opens it again.
func (w *restoreWorld) backup() string {
	w.close()
	to := filepath.Join(w.dir, fmt.Sprintf("backup-%d.db", w.n))
	w.n++
	copyFile(w.t, w.db, to)
	w.open()
	return to
}

// restore puts backup back in place of the database, as an operator
// restoring it would, and starts the gate again.
func (w *restoreWorld) restore(backup string) {
	w.close()
	for _, ext := range []string{"-wal", "-shm"} {
		_ = os.Remove(w.db + ext)
	}
	copyFile(w.t, backup, w.db)
	w.clock.Advance(time.Minute) // time went on meanwhile
	w.open()
}

func copyFile(t *testing.T, from, to string) {
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.Create(to)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// ticket proposes a call of its own session: allowed at once (a draft) or
// parked and approved with the approver's passkey (an e-mail).
func (w *restoreWorld) ticket(gated bool) stepup.TicketID {
	t := w.t
	w.n++
	c := stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"finance@example.com"}`),
		Session: fmt.Sprintf("s-%d", w.n), Principal: agentFor(stepuptest.Approver)}
	if gated {
		c.Tool = "send_email"
	}
	tk, err := w.g.Propose(t.Context(), c)
	require.NoError(t, err)
	if gated {
		require.Equal(t, stepup.StatusPending, tk.Status)
		tk, err = stepuptest.Approve(t.Context(), w.g.Desk(), w.auth, tk.ID)
		require.NoError(t, err)
	}
	require.True(t, tk.Status.Runnable(), "ticket %s is %s", tk.ID, tk.Status)
	return tk.ID
}

// runs counts the tool's runs by idempotency key.
func (w *restoreWorld) runs() map[string]int {
	out := map[string]int{}
	for _, k := range w.exec.Keys() {
		out[k]++
	}
	return out
}

// TestRestoreDrillNeverRunsACallAgain backs a gate's SQLite file up
// mid-flight (tickets approved and not yet run), runs calls, restores the
// backup and restarts the gate, over generated interleavings: which
// tickets exist before the backup, which run before it, which are made and
// run after it. Whatever the interleaving, no tool ever sees a key twice,
// the restarted gate refuses until an operator reconciles, the
// reconcile holds every call that ran in the history the store lost and
// reports it with the key it ran with, and the gate then works again.
func TestRestoreDrillNeverRunsACallAgain(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 21))
			ctx := t.Context()
			w := newRestoreWorld(t, true)
			var before []stepup.TicketID
			for range 2 + rng.IntN(4) {
				id := w.ticket(rng.IntN(2) == 0)
				if rng.IntN(3) == 0 {
					_, err := w.g.Execute(ctx, id)
					require.NoError(t, err)
				} else {
					before = append(before, id)
				}
			}
			backup := w.backup()
			ranAfter := map[stepup.TicketID]bool{}
			for _, id := range before {
				if rng.IntN(2) == 0 {
					_, err := w.g.Execute(ctx, id)
					require.NoError(t, err)
					ranAfter[id] = true
				}
			}
			for range rng.IntN(3) {
				id := w.ticket(rng.IntN(2) == 0)
				_, err := w.g.Execute(ctx, id)
				require.NoError(t, err)
			}
			if len(ranAfter) == 0 { // the drill is about a restore that loses runs
				id := w.ticket(false)
				_, err := w.g.Execute(ctx, id)
				require.NoError(t, err)
			}
			runsBefore := w.runs()

			w.restore(backup)
			for _, id := range before {
				_, err := w.g.Execute(ctx, id)
				require.ErrorIs(t, err, stepup.ErrRolledBack, "a restored store is refused until reconciled")
			}
			_, err := w.g.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"finance@example.com"}`),
				Session: "held", Principal: agentFor(stepuptest.Approver)})
			require.ErrorIs(t, err, stepup.ErrRolledBack, "nothing is decided either")
			assert.Equal(t, runsBefore, w.runs(), "nothing ran while held")

			found, err := w.g.Admin().Watermark(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, found.Found)
			lost := map[string]string{}
			for _, r := range found.Lost {
				lost[r.Ticket] = r.Key
			}
			for id := range ranAfter {
				require.Contains(t, lost, string(id), "a run the store lost is reported")
				assert.Equal(t, 1, runsBefore[lost[string(id)]], "with the key its tool saw")
			}

			rec, err := w.g.Admin().Reconcile(ctx, "user:olga")
			require.NoError(t, err)
			held := map[string]gate.Reconciliation{}
			for _, h := range rec.Held {
				held[h.Ticket] = gate.Reconciliation{}
				if ranAfter[stepup.TicketID(h.Ticket)] {
					assert.True(t, h.Ran, "held %s is marked as having run", h.Ticket)
				}
			}
			for _, id := range before {
				assert.Contains(t, held, string(id), "every call approved before the backup is held")
				_, err := w.g.Execute(ctx, id)
				assert.ErrorIs(t, err, stepup.ErrRevoked)
			}
			for k, n := range w.runs() {
				assert.Equal(t, 1, n, "key %s ran %d times", k, n)
			}

			// The gate works again, and a restart keeps the reconcile.
			id := w.ticket(true)
			w.close()
			w.open()
			res, err := w.g.Execute(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, 1, w.runs()[res.IdempotencyKey])
		})
	}
}

// TestRestoreWithoutWatermarkRunsAgain is the drill on a gate keeping no
// watermark: the restored approval runs a second time. Its key is the
// same as the first run's, so a tool that keeps keys can still refuse it.
func TestRestoreWithoutWatermarkRunsAgain(t *testing.T) {
	ctx := t.Context()
	w := newRestoreWorld(t, false)
	id := w.ticket(true)
	backup := w.backup()
	first, err := w.g.Execute(ctx, id)
	require.NoError(t, err)
	w.restore(backup)
	second, err := w.g.Execute(ctx, id)
	require.NoError(t, err, "without a watermark the restored approval runs again")
	assert.Equal(t, 2, w.exec.Count())
	assert.Equal(t, first.IdempotencyKey, second.IdempotencyKey, "with the approval's key both times")
}

// TestIdempotencyKeyIsTheApprovals: the key every run of a ticket carries
// is receipt.IdempotencyKey of its id and nonce, as recorded.
func TestIdempotencyKeyIsTheApprovals(t *testing.T) {
	ctx := t.Context()
	w := newRestoreWorld(t, false)
	for _, gated := range []bool{false, true} {
		id := w.ticket(gated)
		res, err := w.g.Execute(ctx, id)
		require.NoError(t, err)
		a, err := w.st.Get(ctx, string(id))
		require.NoError(t, err)
		assert.Equal(t, receipt.IdempotencyKey(a.ID, a.Nonce), res.IdempotencyKey)
		assert.Equal(t, res.IdempotencyKey, w.exec.Keys()[len(w.exec.Keys())-1])
	}
}

// TestWatermarkRefusesAClockSteppedBack: once the gate has decided with a
// store time, a store clock read more than the tolerance behind it is a
// store gone back; within the tolerance the gate decides with the newest
// time, so an approval that expired stays expired.
func TestWatermarkRefusesAClockSteppedBack(t *testing.T) {
	steps := []time.Duration{time.Millisecond, 500 * time.Millisecond, time.Second - time.Millisecond}
	for _, back := range steps {
		t.Run("within "+back.String(), func(t *testing.T) {
			ctx := t.Context()
			w := newRestoreWorld(t, true)
			id := w.ticket(true)
			tk, err := w.g.Ticket(ctx, id)
			require.NoError(t, err)
			w.clock.Set(tk.ExpiresAt.Add(back / 2))
			_, err = w.g.Ticket(ctx, id) // the gate sees the store past the expiry
			require.NoError(t, err)
			w.clock.Set(tk.ExpiresAt.Add(back/2 - back))
			_, err = w.g.Execute(ctx, id)
			assert.ErrorIs(t, err, stepup.ErrExpired, "judged with the newest time seen")
			assert.Zero(t, w.exec.Count())
		})
	}
	for _, back := range []time.Duration{time.Second + time.Millisecond, time.Minute, 48 * time.Hour} {
		t.Run("past "+back.String(), func(t *testing.T) {
			ctx := t.Context()
			w := newRestoreWorld(t, true)
			id := w.ticket(true)
			tk, err := w.g.Ticket(ctx, id)
			require.NoError(t, err)
			w.clock.Set(tk.ExpiresAt.Add(time.Second))
			_, err = w.g.Ticket(ctx, id)
			require.NoError(t, err)
			w.clock.Set(tk.ExpiresAt.Add(time.Second - back))
			_, err = w.g.Execute(ctx, id)
			assert.ErrorIs(t, err, stepup.ErrRolledBack)
			_, err = w.g.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
				Session: "x", Principal: agentFor(stepuptest.Approver)})
			assert.ErrorIs(t, err, stepup.ErrRolledBack)
			// A restart does not forget it: the mark is on disk.
			w.close()
			w.open()
			_, err = w.g.Execute(ctx, id)
			assert.ErrorIs(t, err, stepup.ErrRolledBack)
			assert.Zero(t, w.exec.Count())
			rec, err := w.g.Admin().Reconcile(ctx, "user:olga")
			require.NoError(t, err)
			require.Len(t, rec.Held, 1)
			assert.Equal(t, string(id), rec.Held[0].Ticket)
			_, err = w.g.Execute(ctx, id)
			assert.ErrorIs(t, err, stepup.ErrRevoked)
		})
	}
}

// TestWatermarkFileDamageHolds: a mark that does not read back whole
// (edited, truncated in the middle, written under another key) is a mark
// the gate cannot trust; it holds as for a rollback. A last line cut short
// by a crash is an append that never returned, and is ignored.
func TestWatermarkFileDamageHolds(t *testing.T) {
	damage := map[string]func(b []byte) []byte{
		"a byte flipped": func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"a line dropped from the middle": func(b []byte) []byte {
			return append(b[:0:0], dropLine(b, 1)...)
		},
		"a line duplicated with another seq": func(b []byte) []byte {
			return append(b, []byte(`{"seq":999,"head":"`+canon.Digest{}.String()+`","time":1,"mac":"00"}`+"\n")...)
		},
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			w := newRestoreWorld(t, true)
			for range 3 {
				_, err := w.g.Execute(ctx, w.ticket(false))
				require.NoError(t, err)
			}
			w.close()
			b, err := os.ReadFile(w.db + ".mark")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(w.db+".mark", f(b), 0o600))
			w.open()
			_, err = w.g.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
				Session: "x", Principal: agentFor(stepuptest.Approver)})
			assert.ErrorIs(t, err, stepup.ErrRolledBack)
		})
	}
	t.Run("a torn last line", func(t *testing.T) {
		ctx := t.Context()
		w := newRestoreWorld(t, true)
		_, err := w.g.Execute(ctx, w.ticket(false))
		require.NoError(t, err)
		w.close()
		f, err := os.OpenFile(w.db+".mark", os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(`{"seq":12,"head":"ab`)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		w.open()
		_, err = w.g.Execute(ctx, w.ticket(false))
		assert.NoError(t, err)
	})
}

func dropLine(b []byte, n int) []byte {
	var out []byte
	line := 0
	for _, c := range b {
		if line != n {
			out = append(out, c)
		}
		if c == '\n' {
			line++
		}
	}
	return out
}

// TestWatermarkNeedsTheGatesKey: marks under a random key could not be
// read back after a restart.
func TestWatermarkNeedsTheGatesKey(t *testing.T) {
	st, keep := openSQLite(t, filepath.Join(t.TempDir(), "asu.db")), openMarks(t)
	_, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithWatermark(keep))
	assert.ErrorIs(t, err, stepup.ErrConfig)
}

// TestReconcileLeavesAStoreThatIsNotBehind: reconcile changes nothing on a
// store the watermark finds whole.
func TestReconcileLeavesAStoreThatIsNotBehind(t *testing.T) {
	ctx := t.Context()
	w := newRestoreWorld(t, true)
	id := w.ticket(true)
	rec, err := w.g.Admin().Reconcile(ctx, "user:olga")
	require.NoError(t, err)
	assert.Empty(t, rec.Found)
	assert.Empty(t, rec.Held)
	_, err = w.g.Execute(ctx, id)
	assert.NoError(t, err)
	_, err = w.g.Admin().Reconcile(ctx, "")
	assert.ErrorIs(t, err, stepup.ErrConfig, "reconcile names who reviewed")
	st, err := w.st.Get(ctx, string(id))
	require.NoError(t, err)
	assert.Equal(t, store.Done, st.State)
}

func openMarks(t *testing.T) *watermark.File {
	f, err := watermark.OpenFile(filepath.Join(t.TempDir(), "marks"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}
