package gate_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/stepup/watermark"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
)

// restoreWorld is a gate on a database with its watermark beside it,
// which a test backs up, runs, restores and restarts as an operator would.
// The tool (exec) outlives every restart, as a real tool does.
type restoreWorld struct {
	t           *testing.T
	db          drillDB
	mark        string
	key         []byte
	keys        keyring.Source // when set, the gate's ring instead of key
	clock       *stepuptest.Clock
	watermarked bool
	peers       []string // other replicas' watermark files, read at open

	st   store.Store
	keep *watermark.File
	g    *gate.Gate
	exec *stepuptest.Recorder
	auth *stepuptest.Authenticator
	n    int
}

// drillDB is a database a restore drill backs up and restores.
type drillDB interface {
	open(t *testing.T) store.Store
	backup(t *testing.T) string // with the store closed
	restore(t *testing.T, backup string)
	fakeClock() bool // the store reads the world's clock
}

// sqliteDrill is a SQLite file; a backup is a copy of the closed file.
type sqliteDrill struct {
	dir, path string
	clock     *stepuptest.Clock
	n         int
}

func (d *sqliteDrill) open(t *testing.T) store.Store {
	st, err := sqlite.Open(t.Context(), d.path, &sqlite.Options{Clock: d.clock.Now})
	require.NoError(t, err)
	return st
}

func (d *sqliteDrill) backup(t *testing.T) string {
	to := filepath.Join(d.dir, fmt.Sprintf("backup-%d.db", d.n))
	d.n++
	copyFile(t, d.path, to)
	return to
}

func (d *sqliteDrill) restore(t *testing.T, backup string) {
	for _, ext := range []string{"-wal", "-shm"} {
		_ = os.Remove(d.path + ext)
	}
	copyFile(t, backup, d.path)
	d.clock.Advance(time.Minute) // time went on meanwhile
}

func (d *sqliteDrill) fakeClock() bool { return true }

func newRestoreWorld(t *testing.T, watermarked bool) *restoreWorld {
	dir := t.TempDir()
	clock := stepuptest.NewClock(stepuptest.Start())
	return newRestoreWorldOn(t, &sqliteDrill{dir: dir, path: filepath.Join(dir, "asu.db"), clock: clock}, clock, watermarked)
}

func newRestoreWorldOn(t *testing.T, db drillDB, clock *stepuptest.Clock, watermarked bool) *restoreWorld {
	w := &restoreWorld{t: t, db: db, mark: filepath.Join(t.TempDir(), "asu.mark"), key: []byte("the gate key of the restore drill!!"),
		clock: clock, watermarked: watermarked, exec: &stepuptest.Recorder{}}
	w.open()
	var opts []passkey.EnrollOption
	if db.fakeClock() {
		opts = append(opts, passkey.WithClock(clock.Now))
	}
	enroll, err := passkey.NewEnrollment(w.st, stepuptest.RP(), append(opts, passkey.WithSealKey(stepuptest.SealKey()))...)
	require.NoError(t, err)
	w.auth, err = stepuptest.Enroll(t.Context(), enroll, stepuptest.Approver)
	require.NoError(t, err)
	t.Cleanup(w.close)
	return w
}

func (w *restoreWorld) open() {
	t := w.t
	var err error
	w.st = w.db.open(t)
	opts := []gate.Option{gate.WithKey(w.key), gate.WithDwell(0),
		gate.WithExecutor("write_draft", w.exec), gate.WithExecutor("send_email", w.exec)}
	if w.db.fakeClock() {
		opts = append(opts, gate.WithLocalClock(w.clock.Now))
	}
	if w.keys != nil {
		opts = append(opts, gate.WithKeyRing(w.keys))
	}
	if w.watermarked {
		w.keep, err = watermark.OpenFile(w.mark)
		require.NoError(t, err)
		peers := make([]plug.Watermarks, len(w.peers))
		for i, p := range w.peers {
			peers[i] = watermark.Peer(p)
		}
		opts = append(opts, gate.WithWatermark(w.keep, peers...))
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
	b := w.db.backup(w.t)
	w.open()
	return b
}

// restore puts backup back in place of the database, as an operator
// restoring it would, and starts the gate again.
func (w *restoreWorld) restore(backup string) {
	w.close()
	w.db.restore(w.t, backup)
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
	restoreDrill(t, 8, func(t *testing.T) *restoreWorld { return newRestoreWorld(t, true) })
}

// restoreDrill runs seeds generated restore drills on worlds newWorld makes.
func restoreDrill(t *testing.T, seeds uint64, newWorld func(t *testing.T) *restoreWorld) {
	for seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 21))
			ctx := t.Context()
			w := newWorld(t)
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
			held := map[string]plug.Reconciliation{}
			for _, h := range rec.Held {
				held[h.Ticket] = plug.Reconciliation{}
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
			b, err := os.ReadFile(w.mark)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(w.mark, f(b), 0o600))
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
		f, err := os.OpenFile(w.mark, os.O_APPEND|os.O_WRONLY, 0)
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

// TestLostOrGarbledWALIsNoLossOrARefusal kills a gate on SQLite mid-flight
// (its write-ahead log not yet folded into the database file) and loses,
// truncates or garbles the log and its index before the restart, over
// generated damage, then asks for every ticket to run again. Whatever
// SQLite recovers, either nothing the gate had seen is lost, or the gate
// refuses with the rollback error; no call ever runs a second time. The
// same drill on a gate keeping no watermark runs calls twice.
func TestLostOrGarbledWALIsNoLossOrARefusal(t *testing.T) {
	twice := 0
	for seed := range uint64(14) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			assert.Zero(t, walDrill(t, seed, true), "a call ran twice")
		})
		t.Run(fmt.Sprint("no watermark, seed ", seed), func(t *testing.T) { twice += walDrill(t, seed, false) })
	}
	assert.NotZero(t, twice, "without a watermark the drill runs calls twice: the test bites")
}

var walDamages = []string{"wal deleted", "wal emptied", "wal truncated", "wal garbled", "shm deleted", "shm garbled", "both deleted"}

// walDrill runs one generated kill-and-damage drill and returns how many
// calls ran more than once.
func walDrill(t *testing.T, seed uint64, watermarked bool) int {
	damage := walDamages[seed%uint64(len(walDamages))]
	t.Log(damage)
	rng := rand.New(rand.NewPCG(seed, 7))
	ctx := t.Context()
	w := newRestoreWorld(t, watermarked)
	d := w.db.(*sqliteDrill)
	var all, later []stepup.TicketID
	for range 3 + rng.IntN(4) {
		id := w.ticket(rng.IntN(2) == 0)
		all = append(all, id)
		if rng.IntN(3) == 0 {
			_, err := w.g.Execute(ctx, id)
			require.NoError(t, err)
		} else {
			later = append(later, id)
		}
	}
	w.close() // a checkpoint: what was decided so far is in the database file
	w.open()
	for _, id := range later {
		if rng.IntN(3) != 0 {
			_, err := w.g.Execute(ctx, id)
			require.NoError(t, err)
		}
	}
	// The kill: the files as they are on disk now, the log unfolded.
	crash := filepath.Join(d.dir, "crash")
	require.NoError(t, os.Mkdir(crash, 0o700))
	for _, ext := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(d.path + ext); err == nil {
			copyFile(t, d.path+ext, filepath.Join(crash, "asu.db"+ext))
		}
	}
	w.close()
	for _, ext := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(d.path + ext)
		if _, err := os.Stat(filepath.Join(crash, "asu.db"+ext)); err == nil {
			copyFile(t, filepath.Join(crash, "asu.db"+ext), d.path+ext)
		}
	}
	mangle(t, rng, d.path, damage)
	runs := w.runs()

	st, err := sqlite.Open(ctx, d.path, &sqlite.Options{Clock: w.clock.Now})
	if err != nil {
		return 0 // the store refuses to open: nothing can run
	}
	_ = st.Close()
	w.open()
	for _, id := range all {
		_, _ = w.g.Execute(ctx, id) // refused: rolled back, already run, or rows that cannot be read
	}
	n := 0
	for k, c := range w.runs() {
		if c > 1 {
			n++
		}
		_ = k
	}
	for k := range runs {
		assert.Contains(t, w.runs(), k)
	}
	return n
}

// mangle damages the write-ahead log or its index beside path.
func mangle(t *testing.T, rng *rand.Rand, path, damage string) {
	wal, shm := path+"-wal", path+"-shm"
	garble := func(p string) {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			return
		}
		for range 1 + rng.IntN(16) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		require.NoError(t, os.WriteFile(p, b, 0o600))
	}
	switch damage {
	case "wal deleted":
		_ = os.Remove(wal)
	case "wal emptied":
		_ = os.Truncate(wal, 0)
	case "wal truncated":
		if fi, err := os.Stat(wal); err == nil && fi.Size() > 0 {
			_ = os.Truncate(wal, rng.Int64N(fi.Size()))
		}
	case "wal garbled":
		garble(wal)
	case "shm deleted":
		_ = os.Remove(shm)
	case "shm garbled":
		garble(shm)
	case "both deleted":
		_ = os.Remove(wal)
		_ = os.Remove(shm)
	}
}

// TestWatermarkSurvivesKeyRotation: marks written under a key rotated out
// since still read back (under the keys in force when they were written),
// are written again under the current key, and still hold a rollback
// after the old key's grace ended and it left the ring.
func TestWatermarkSurvivesKeyRotation(t *testing.T) {
	ctx := t.Context()
	old, err := keyring.Single([]byte("the gate key before the rotation!!!!"))
	require.NoError(t, err)
	live := keyring.NewLive(old)
	w := newRestoreWorld(t, true)
	w.keys = live
	w.close()
	w.open()
	id := w.ticket(true)
	backup := w.backup()
	_, err = w.g.Execute(ctx, id)
	require.NoError(t, err)

	rotated, _, err := old.Rotate([]byte("the gate key after the rotation!!!!!"), w.clock.Now(), time.Hour)
	require.NoError(t, err)
	live.Set(rotated)
	w.close()
	w.open()
	_, err = w.g.Execute(ctx, w.ticket(false))
	require.NoError(t, err, "the marks under the old key read back")

	w.clock.Advance(2 * time.Hour) // the old key's grace is over, and it is pruned
	live.Set(rotated.Prune(w.clock.Now()))
	require.Len(t, live.Ring().Keys(), 1)
	w.restore(backup)
	_, err = w.g.Execute(ctx, id)
	assert.ErrorIs(t, err, stepup.ErrRolledBack, "marks rewritten under the new key still hold the rollback")
	found, err := w.g.Admin().Watermark(ctx)
	require.NoError(t, err)
	assert.NotContains(t, found.Found, "damaged", "held for the rollback, not for marks it cannot read")
	assert.Contains(t, found.Found, "audit chain")
	for k, n := range w.runs() {
		assert.Equal(t, 1, n, "key %s ran %d times", k, n)
	}
}

// TestHeldGateMaintainSaysItOnce: a gate held for a rollback reports the
// hold once a tick, not once for each thing maintenance would have done.
func TestHeldGateMaintainSaysItOnce(t *testing.T) {
	ctx := t.Context()
	w := newRestoreWorld(t, true)
	id := w.ticket(true)
	backup := w.backup()
	_, err := w.g.Execute(ctx, id)
	require.NoError(t, err)
	w.restore(backup)
	reports := make(chan error, 16)
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- w.g.Maintain(mctx, time.Millisecond, func(err error) {
			select {
			case reports <- err:
			default:
			}
		})
	}()
	for range 3 {
		err := <-reports
		require.ErrorIs(t, err, stepup.ErrRolledBack)
		assert.Equal(t, 1, strings.Count(err.Error(), stepup.ErrRolledBack.Error()), "said once: %v", err)
	}
	cancel()
	<-done
	assert.Zero(t, w.exec.Count()-1, "nothing ran while held")
}
