package gate_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// replicas are gates of one SQLite file, each with its own watermark
// file and the others' as peers, as the service runs them, and the one
// tool they all run.
type replicas struct {
	t     *testing.T
	first *restoreWorld
	all   []*restoreWorld
	dir   string
}

func newReplicas(t *testing.T, n int) *replicas {
	first := newRestoreWorld(t, true)
	r := &replicas{t: t, first: first, all: []*restoreWorld{first}, dir: t.TempDir()}
	_, err := first.g.Admin().Watermark(t.Context()) // the first writes its mark
	require.NoError(t, err)
	for range n - 1 {
		r.add(filepath.Join(r.dir, fmt.Sprintf("replica-%d.mark", len(r.all))))
	}
	r.peerAll()
	first.close() // the first starts again with the others' marks as peers
	first.open()
	return r
}

// add starts another replica of the store, keeping its marks in mark.
func (r *replicas) add(mark string) *restoreWorld {
	f := r.first
	w := &restoreWorld{t: r.t, db: f.db, mark: mark, key: f.key, clock: f.clock, watermarked: true, exec: f.exec, auth: f.auth}
	for _, o := range r.all {
		w.peers = append(w.peers, o.mark)
	}
	copyMarks(r.t, f.mark, mark) // a new replica starts from a running one's marks
	w.open()
	r.t.Cleanup(w.close)
	r.all = append(r.all, w)
	return w
}

// copyMarks copies a replica's watermark file, as an operator starting a
// new replica does; a file not written yet copies as none.
func copyMarks(t *testing.T, from, to string) {
	if _, err := os.Stat(from); err == nil {
		copyFile(t, from, to)
	}
}

// peerAll makes every replica's peers the others' files, from its next
// start.
func (r *replicas) peerAll() {
	for _, w := range r.all {
		w.peers = nil
		for _, o := range r.all {
			if o != w {
				w.peers = append(w.peers, o.mark)
			}
		}
	}
}

func (r *replicas) closeAll() {
	for _, w := range r.all {
		w.close()
	}
}

func (r *replicas) openAll() {
	for _, w := range r.all {
		w.open()
	}
}

// TestRestoredStoreHoldsOnEveryReplica: replicas run, approve and execute
// calls on one store; it is backed up, more runs, and it is restored. Then
// an operator action generated over what operators do: restart every
// replica as it was; start one that was stopped since before the backup;
// lose a replica's watermark file (deleted, emptied, or on a disk that
// died: a new path); add a new replica; lose every file. On every replica
// that starts, no call approved before the backup runs and nothing is
// decided until a reconcile, which holds every call that may have run;
// after it every replica decides again, and no tool ever saw a key twice.
func TestRestoredStoreHoldsOnEveryReplica(t *testing.T) {
	actions := map[string]func(r *replicas){
		"restart as they were": func(r *replicas) {},
		"a watermark file deleted": func(r *replicas) {
			require.NoError(t, os.Remove(r.all[0].mark))
		},
		"a watermark file emptied": func(r *replicas) {
			require.NoError(t, os.WriteFile(r.all[1].mark, nil, 0o600))
		},
		"a replica's disk died: its file is new": func(r *replicas) {
			r.all[0].mark = filepath.Join(r.dir, "new-disk.mark")
			r.peerAll()
		},
		"every watermark file lost": func(r *replicas) {
			for i, w := range r.all {
				w.mark = filepath.Join(r.dir, fmt.Sprintf("lost-%d.mark", i))
			}
			r.peerAll()
		},
		"a new replica joins, from a copy of a replica's file": func(r *replicas) {
			r.add(filepath.Join(r.dir, "joined.mark")).close()
			r.peerAll()
		},
		"a new replica joins with a file of its own": func(r *replicas) {
			w := r.add(filepath.Join(r.dir, "joined.mark"))
			w.close()
			require.NoError(t, os.Remove(w.mark))
			r.peerAll()
		},
	}
	for name, act := range actions {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("%s/seed %d", name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 39))
				ctx := t.Context()
				r := newReplicas(t, 2+rng.IntN(2))
				pick := func() *restoreWorld { return r.all[rng.IntN(len(r.all))] }
				var before []stepup.TicketID
				for range 2 + rng.IntN(4) {
					w := pick()
					id := w.ticket(rng.IntN(2) == 0)
					if rng.IntN(3) == 0 {
						_, err := w.g.Execute(ctx, id)
						require.NoError(t, err)
					} else {
						before = append(before, id)
					}
				}
				// One replica may stop here and miss what follows.
				stopped := -1
				if rng.IntN(2) == 0 {
					stopped = rng.IntN(len(r.all))
				}
				r.closeAll()
				backup := r.first.db.backup(t)
				for i, w := range r.all {
					if i != stopped {
						w.open()
					}
				}
				saw := map[string]bool{} // the watermark files that saw a run after the backup
				running := func() *restoreWorld {
					for {
						if i := rng.IntN(len(r.all)); i != stopped {
							saw[r.all[i].mark] = true
							return r.all[i]
						}
					}
				}
				// After the backup: some approved calls run, on any replica.
				ranAfter := false
				for _, id := range before {
					if rng.IntN(2) == 0 {
						_, err := running().g.Execute(ctx, id)
						require.NoError(t, err)
						ranAfter = true
					}
				}
				if !ranAfter {
					w := running()
					_, err := w.g.Execute(ctx, w.ticket(false))
					require.NoError(t, err)
				}
				runs := r.first.runs()

				r.closeAll()
				r.first.db.restore(t, backup)
				act(r)
				r.openAll()
				has := func(path string) bool { b, err := os.ReadFile(path); return err == nil && len(b) > 0 }
				seen := false
				for _, w := range r.all {
					seen = seen || saw[w.mark] && has(w.mark)
				}
				for i, w := range r.all {
					if !seen && has(w.mark) {
						// The only marks that saw the runs since the backup are
						// lost, and this replica's own never saw them: nothing
						// it reads can tell the store went back (the replica
						// whose file was lost holds).
						continue
					}
					for _, id := range before {
						_, err := w.g.Execute(ctx, id)
						require.ErrorIs(t, err, stepup.ErrRolledBack, "replica %d runs a call approved before the backup", i)
					}
					_, err := w.g.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"finance@example.com"}`),
						Session: "held", Principal: agentFor(stepuptest.Approver)})
					require.ErrorIs(t, err, stepup.ErrRolledBack, "replica %d decides", i)
				}
				assert.Equal(t, runs, r.first.runs(), "nothing ran while held")

				// One replica reconciles; the others, restarted, read its
				// reconcile as a peer and decide again. A replica whose file
				// was lost starts from a copy of the reconciled one's.
				w := pick()
				for !seen && has(w.mark) { // the operator reconciles on a replica that holds
					w = pick()
				}
				_, err := w.g.Admin().Reconcile(ctx, "user:olga")
				require.NoError(t, err)
				r.closeAll()
				for _, o := range r.all {
					if b, err := os.ReadFile(o.mark); err != nil || len(b) == 0 {
						copyMarks(t, w.mark, o.mark)
					}
				}
				r.openAll()
				for _, id := range before {
					_, err := pick().g.Execute(ctx, id)
					assert.ErrorIs(t, err, stepup.ErrRevoked, "a call approved before the backup is held")
				}
				for i, w := range r.all {
					res, err := w.g.Execute(ctx, w.ticket(rng.IntN(2) == 0))
					require.NoError(t, err, "replica %d after the reconcile", i)
					assert.Equal(t, 1, r.first.runs()[res.IdempotencyKey])
				}
				for k, n := range r.first.runs() {
					assert.Equal(t, 1, n, "key %s ran %d times", k, n)
				}
			})
		}
	}
}

// TestStaleReplicaWithoutPeersRunsAgain is the drill's naive variant: a
// replica stopped before the backup, restarted after the restore with only
// its own marks, finds the store ahead of them and runs again a call
// another replica ran after the backup. Peers are what stop it.
func TestStaleReplicaWithoutPeersRunsAgain(t *testing.T) {
	ctx := t.Context()
	r := newReplicas(t, 2)
	a, b := r.all[0], r.all[1]
	_, err := b.g.Execute(ctx, b.ticket(false)) // b has a mark
	require.NoError(t, err)
	id := a.ticket(true)
	b.close() // b stops
	a.close()
	backup := a.db.backup(t)
	a.open()
	first, err := a.g.Execute(ctx, id)
	require.NoError(t, err)
	a.close()
	a.db.restore(t, backup)
	for _, peered := range []bool{false, true} {
		if !peered {
			b.peers = nil
		} else {
			r.peerAll()
		}
		b.open()
		_, err = b.g.Execute(ctx, id)
		if peered {
			assert.ErrorIs(t, err, stepup.ErrRolledBack, "with a's marks as peers b holds")
		} else {
			require.NoError(t, err, "with only its own marks b runs the call again")
			assert.Equal(t, 2, r.first.runs()[first.IdempotencyKey])
			// Put the store back as the drill had it for the peered case.
			b.close()
			a.db.restore(t, backup)
		}
		b.close()
	}
}
