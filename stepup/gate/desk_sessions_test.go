package gate_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// sessionID returns a random session id of 16 to 64 bytes.
func sessionID(r *rand.Rand) []byte {
	id := make([]byte, 16+r.IntN(49))
	for i := range id {
		id[i] = byte(r.Uint32())
	}
	return id
}

// nearIDs are ids a sign-out of id must not end: one byte changed, one
// byte more or less, its halves swapped.
func nearIDs(id []byte, r *rand.Rand) [][]byte {
	changed := bytes.Clone(id)
	changed[r.IntN(len(changed))] ^= byte(1 + r.IntN(255))
	return [][]byte{changed, append(bytes.Clone(id), 0), id[:len(id)-1], id[1:],
		append(bytes.Clone(id[len(id)/2:]), id[:len(id)/2]...)}
}

// TestDeskSessionEndedOnEveryReplica: for generated session ids, a
// session one gate ends is ended on another gate over the same store,
// and on a gate over the database reopened (a restart); sessions it did
// not end, ids near it, and the same id with another end, are not.
func TestDeskSessionEndedOnEveryReplica(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"memory", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			clock := stepuptest.NewClock(stepuptest.Start())
			var (
				open   func() store.Store
				closed func(store.Store)
			)
			switch backend {
			case "memory":
				st := stepuptest.Memory(clock)
				open, closed = func() store.Store { return st }, func(store.Store) {}
			case "sqlite":
				path := filepath.Join(t.TempDir(), "asu.db")
				open = func() store.Store { return openSQLiteAt(t, path, clock) }
				closed = func(st store.Store) { require.NoError(t, st.Close()) }
			}
			deskOn := func(st store.Store) *gate.Desk {
				g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
				require.NoError(t, err)
				return g.Desk()
			}
			first := open()
			a, b := deskOn(first), deskOn(open())

			r := rand.New(rand.NewPCG(21, 8))
			type session struct {
				id    []byte
				until time.Time
			}
			var ended, standing []session
			for i := range 40 {
				s := session{sessionID(r), stepuptest.Start().Add(time.Duration(1+r.IntN(43200)) * time.Second)}
				if i%2 == 0 {
					ended = append(ended, s)
				} else {
					standing = append(standing, s)
				}
			}
			for i, s := range ended {
				d := a
				if i%3 == 0 {
					d = b // either replica ends sessions
				}
				require.NoError(t, d.EndSession(ctx, s.id, s.until))
			}
			require.NoError(t, a.EndSession(ctx, ended[0].id, ended[0].until), "ending again is no error")

			check := func(name string, d *gate.Desk) {
				for _, s := range ended {
					out, err := d.SessionEnded(ctx, s.id, s.until)
					require.NoError(t, err)
					assert.True(t, out, "%s: an ended session stands", name)
					// Kept to the second: a finer until is the same record.
					out, err = d.SessionEnded(ctx, s.id, s.until.Add(400*time.Millisecond))
					require.NoError(t, err)
					assert.True(t, out, "%s: the same second", name)
					out, err = d.SessionEnded(ctx, s.id, s.until.Add(time.Second))
					require.NoError(t, err)
					assert.False(t, out, "%s: the same id with another end is another session", name)
					for _, near := range nearIDs(s.id, r) {
						out, err := d.SessionEnded(ctx, near, s.until)
						require.NoError(t, err)
						assert.False(t, out, "%s: an id near an ended one", name)
					}
				}
				for _, s := range standing {
					out, err := d.SessionEnded(ctx, s.id, s.until)
					require.NoError(t, err)
					assert.False(t, out, "%s: a session nobody ended", name)
				}
			}
			check("this replica", a)
			check("another replica", b)
			closed(first)
			check("after a restart", deskOn(open()))
		})
	}
}

// countingStore records the counter keys a gate reads and writes.
type countingStore struct {
	*memory.Store
	mu   sync.Mutex
	keys []string
}

func (s *countingStore) AddCount(ctx context.Context, key string, window time.Time, delta int64) (int64, error) {
	s.mu.Lock()
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	return s.Store.AddCount(ctx, key, window, delta)
}

func (s *countingStore) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	s.mu.Lock()
	for _, op := range ops {
		s.keys = append(s.keys, op.Key)
	}
	s.mu.Unlock()
	return s.Store.AddCounts(ctx, ops)
}

// TestDeskSessionKeysAreApartFromFlood: sign-outs are kept under keys of
// their own, never one flood control counts under, and the flood counts
// of proposals (with their windows) end no session.
func TestDeskSessionKeysAreApartFromFlood(t *testing.T) {
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := &countingStore{Store: stepuptest.Memory(clock)}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
	require.NoError(t, err)
	d := g.Desk()
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 20 {
		_, err := g.Propose(ctx, floodCall(fmt.Sprintf("sess-%d", i), "user:dana", i))
		require.NoError(t, err)
	}
	st.mu.Lock()
	floodKeys := append([]string(nil), st.keys...)
	st.keys = nil
	st.mu.Unlock()
	require.NotEmpty(t, floodKeys, "proposals were counted")
	for range 50 {
		id, until := sessionID(r), clock.Now().Add(time.Hour)
		out, err := d.SessionEnded(ctx, id, until)
		require.NoError(t, err)
		assert.False(t, out)
		require.NoError(t, d.EndSession(ctx, id, until))
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, k := range st.keys {
		assert.True(t, strings.HasPrefix(k, "session/v1/ended/"), k)
		assert.LessOrEqual(t, len(k), store.MaxKeySize)
		for _, f := range floodKeys {
			assert.False(t, strings.HasPrefix(k, strings.SplitN(f, "/", 2)[0]+"/"), "%s shares a prefix with flood's %s", k, f)
		}
	}
}

// noCounters is a store that keeps no counters: its gate takes flood
// counts from elsewhere.
type noCounters struct{ store.Gate }

// TestDeskSessionRefusals: ids too short or too long and a session
// without an end are configuration errors, as is a store without
// counters; a store failure wraps ErrStore, for ending and for reading,
// and never reads as "not ended".
func TestDeskSessionRefusals(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	d := h.Gate.Desk()
	until := h.Clock.Now().Add(time.Hour)
	for name, id := range map[string][]byte{
		"no id":        nil,
		"15 bytes":     make([]byte, 15),
		"over the key": make([]byte, store.MaxKeySize+1),
	} {
		assert.ErrorIs(t, d.EndSession(ctx, id, until), stepup.ErrConfig, name)
		_, err := d.SessionEnded(ctx, id, until)
		assert.ErrorIs(t, err, stepup.ErrConfig, name)
	}
	assert.ErrorIs(t, d.EndSession(ctx, make([]byte, 16), time.Time{}), stepup.ErrConfig, "no end")
	require.NoError(t, d.EndSession(ctx, make([]byte, store.MaxKeySize), until), "the longest id")

	bare := noCounters{h.Store}
	g, err := gate.New(bare, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store),
		gate.WithFlood(limiter(t, newCounterStore(t), h.Clock, flood.Limits{})))
	require.NoError(t, err)
	assert.ErrorIs(t, g.Desk().EndSession(ctx, make([]byte, 16), until), stepup.ErrConfig)
	_, err = g.Desk().SessionEnded(ctx, make([]byte, 16), until)
	assert.ErrorIs(t, err, stepup.ErrConfig)

	broken := brokenCounters{h.Store}
	g, err = gate.New(broken, stepuptest.SeedCatalog(), stepuptest.Passkeys(broken),
		gate.WithFlood(limiter(t, newCounterStore(t), h.Clock, flood.Limits{})))
	require.NoError(t, err)
	assert.ErrorIs(t, g.Desk().EndSession(ctx, make([]byte, 16), until), stepup.ErrStore)
	out, err := g.Desk().SessionEnded(ctx, make([]byte, 16), until)
	assert.ErrorIs(t, err, stepup.ErrStore)
	assert.False(t, out)
}

// A session signed out on one replica is ended on every replica sharing
// the store.
func ExampleDesk_EndSession() {
	st := memory.New(nil)
	one, _ := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
	two, _ := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
	ctx := context.Background()
	id := []byte("0123456789abcdef") // the session's own random id
	until := time.Date(2026, 10, 30, 9, 30, 0, 0, time.UTC)

	ended, err := two.Desk().SessionEnded(ctx, id, until)
	fmt.Println(ended, err)
	err = one.Desk().EndSession(ctx, id, until)
	fmt.Println(err)
	ended, err = two.Desk().SessionEnded(ctx, id, until)
	fmt.Println(ended, err)
	// Output:
	// false <nil>
	// <nil>
	// true <nil>
}

// A site checks the session its cookie names on every request, and
// refuses when the store does not answer.
func ExampleDesk_SessionEnded() {
	st := memory.New(nil)
	g, _ := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
	ctx := context.Background()
	id, until := []byte("fedcba9876543210"), time.Date(2026, 10, 30, 9, 30, 0, 0, time.UTC)

	live := func() string {
		ended, err := g.Desk().SessionEnded(ctx, id, until)
		switch {
		case err != nil:
			return "refused: " + err.Error()
		case ended:
			return "signed out"
		}
		return "live"
	}
	fmt.Println(live())
	_ = g.Desk().EndSession(ctx, id, until)
	fmt.Println(live())
	_ = st.Close()
	fmt.Println(strings.HasPrefix(live(), "refused: session ended: stepup: store failure"))
	// Output:
	// live
	// signed out
	// true
}

// TestMaintainPrunesSignOutsAndFloodCounts: Maintain deletes the
// sign-outs of sessions over for more than a day and the flood counts
// past their windows, on memory and SQLite; a sign-out whose session may
// still be open, and counts still in their windows, stay.
func TestMaintainPrunesSignOutsAndFloodCounts(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"memory", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			clock := stepuptest.NewClock(stepuptest.Start())
			var st store.Store = stepuptest.Memory(clock)
			if backend == "sqlite" {
				st = openSQLiteAt(t, filepath.Join(t.TempDir(), "asu.db"), clock)
				t.Cleanup(func() { _ = st.Close() })
			}
			g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
			require.NoError(t, err)
			d := g.Desk()
			r := rand.New(rand.NewPCG(5, 9))
			over, open := sessionID(r), sessionID(r)
			overUntil, openUntil := clock.Now().Add(time.Hour), clock.Now().Add(3*24*time.Hour)
			require.NoError(t, d.EndSession(ctx, over, overUntil))
			require.NoError(t, d.EndSession(ctx, open, openUntil))
			for i := range 5 {
				_, err := g.Propose(ctx, floodCall(fmt.Sprintf("old-%d", i), "user:dana", i))
				require.NoError(t, err)
			}
			pruner := st.(store.CountPruner)
			// The built-in limits' longest window is an hour: what the
			// proposals counted is past its windows after 2h and a day.
			clock.Advance(time.Hour + store.CountHorizon + time.Minute)
			_, err = g.Propose(ctx, floodCall("recent", "user:dana", 99))
			require.NoError(t, err)
			clock.Advance(2 * time.Hour)

			mctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- g.Maintain(mctx, time.Hour, nil) }()
			require.Eventually(t, func() bool {
				ended, err := d.SessionEnded(ctx, over, overUntil)
				return err == nil && !ended
			}, 10*time.Second, 5*time.Millisecond, "the sign-out of a session over for a day is pruned")
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
			ended, err := d.SessionEnded(ctx, open, openUntil)
			require.NoError(t, err)
			assert.True(t, ended, "a session that may still be open stays signed out")
			n, err := pruner.PruneCounts(ctx, "flood/", clock.Now().Add(-2*time.Hour-store.CountHorizon), 0)
			require.NoError(t, err)
			assert.Zero(t, n, "the old proposals' flood counts were pruned by Maintain")
			n, err = pruner.PruneCounts(ctx, "flood/", clock.Now(), 0)
			require.NoError(t, err)
			assert.Positive(t, n, "the recent proposal's counts were kept")
		})
	}
}
