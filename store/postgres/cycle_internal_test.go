package postgres

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	asuaudit "github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// row is a Note making a small audit record of the ticket it is given.
func row(decision string) store.Note {
	return func(a store.Approval, _ bool) asuaudit.Record {
		return asuaudit.Record{TicketID: a.ID, Task: a.Task, Step: a.Step, Session: a.Session, Tool: a.Tool,
			EffectClass: a.EffectClass, ArgsDigest: a.Digest, Principal: a.Requester, PolicyVersion: a.PolicyVersion,
			Decision: decision, Reason: string(a.State), Taint: a.Taint, Approver: a.Approver,
			IdempotencyKey: a.IdempotencyKey}
	}
}

// cycle is one approval cycle of ticket n: propose (park, with caps),
// approve, execute (consume and finish), with an audit row for each
// decision. separate writes each row in its own transaction after the
// state change, as the gate did before decisions and rows were one
// transaction (and without a row for the consume, which it did not
// write). now gives each deciding time.
func cycle(ctx context.Context, s *Store, n int, now func() time.Time, separate bool) error {
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
	caps := store.Caps{PerSession: 10, PerUser: 1000}
	a, _, err := s.Park(ctx, storetest.TicketAt(fmt.Sprintf("s%d", n), fmt.Sprintf("u%d", n%64), n, now()), caps,
		note("needs_approval"))
	if err != nil {
		return err
	}
	if err := audit(a, "needs_approval"); err != nil {
		return err
	}
	r := store.Resolution{To: store.Approved, Approver: a.User, At: now()}
	if a, err = s.Resolve(ctx, a.ID, r, note("approved")); err != nil {
		return err
	}
	if err := audit(a, "approved"); err != nil {
		return err
	}
	at := now()
	claim := store.Claim{Key: "key-" + a.ID, Owner: "gate-1", At: at, LeaseUntil: at.Add(30 * time.Second)}
	if a, err = s.Consume(ctx, a.ID, claim, note("executing")); err != nil {
		return err
	}
	o := store.Outcome{State: store.Done, Result: []byte(`"ok"`), At: now()}
	if a, err = s.Finish(ctx, a.ID, a.Fence, o, note("executed")); err != nil {
		return err
	}
	return audit(a, "executed")
}

// xids returns the next transaction id the database will assign. Every
// transaction that writes gets one when it first writes, and one that
// only reads gets none, so the difference between two readings counts the
// writing transactions committed or aborted in between.
func xids(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	require.NoError(t, s.pool.QueryRow(t.Context(), `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&n))
	return n
}

// TestCommitsPerCycle counts the writing transactions of an approval
// cycle on PostgreSQL: four, one per decision with its row, where writing
// the rows separately took seven (and recorded no row for the consume);
// one for a call allowed by policy and one for a call covered by a grant,
// each stored approved with its row. It does not run in parallel, so that
// no other test writes meanwhile; a background write (autovacuum) can only
// add, so the least of three counts is taken.
func TestCommitsPerCycle(t *testing.T) {
	ctx := t.Context()
	s := testStore(t)
	count := func(call func(n int) error) int64 {
		least := int64(1 << 62)
		for i := range 3 {
			before := xids(t, s)
			require.NoError(t, call(i))
			least = min(least, xids(t, s)-before)
		}
		return least
	}
	now := func() time.Time {
		n, err := s.Now(ctx)
		require.NoError(t, err)
		return n
	}
	n := 0
	next := func() int { n++; return n }
	rows := func() int64 {
		h, err := s.AuditHead(ctx)
		require.NoError(t, err)
		return h.Seq
	}

	start := rows()
	assert.EqualValues(t, 7, count(func(int) error { return cycle(ctx, s, next(), now, true) }), "rows apart")
	assert.EqualValues(t, 3*3, rows()-start, "three rows per cycle written apart: none for the consume")
	start = rows()
	assert.EqualValues(t, 4, count(func(int) error { return cycle(ctx, s, next(), now, false) }), "one per decision")
	assert.EqualValues(t, 3*4, rows()-start, "four rows per cycle, each with its decision")

	allowed := func(int) error {
		a := storetest.TicketAt("s-allowed", "u1", next(), now())
		a.State, a.Approver = store.Approved, "policy"
		_, _, err := s.Park(ctx, a, store.Caps{}, row("allowed"))
		return err
	}
	assert.EqualValues(t, 1, count(allowed), "an allowed call is stored approved with its row")

	at := now()
	require.NoError(t, s.PutGrant(ctx, store.Grant{ID: "g1", User: "u1", Spec: []byte(`{}`), Remaining: 10,
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}))
	granted := func(int) error {
		a := storetest.TicketAt("s-granted", "u1", next(), now())
		a.State, a.Approver = store.Approved, "grant:g1"
		_, _, err := s.ParkGranted(ctx, a, "g1", row("granted"))
		return err
	}
	assert.EqualValues(t, 1, count(granted), "a covered call takes its use and is stored approved with its row")
}

// BenchmarkCycle measures full approval cycles ([cycle]) with 1 and 16
// workers: "together" is the store as it is, four transactions per cycle;
// "apart" writes each audit row in a transaction of its own, seven per
// cycle, as before. Both run in the same binary on the same server, one
// after the other, so machine load falls on both alike. Workers read
// deciding times from the database's clock, refreshed in the background
// well within store.MaxSkew, so the clock costs no round trip per cycle.
// cycles/s is the figure the benchmark notes report.
func BenchmarkCycle(b *testing.B) {
	for _, design := range []struct {
		name     string
		separate bool
	}{{"together", false}, {"apart", true}} {
		for _, g := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/g%d", design.name, g), func(b *testing.B) {
				ctx := context.Background()
				s := testStore(b)
				clock := newCachedClock(b, s)
				var next atomic.Int64
				run := func() error { return cycle(ctx, s, int(next.Add(1)), clock.now, design.separate) }
				b.SetParallelism((g + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ResetTimer()
				if g == 1 {
					for range b.N {
						if err := run(); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := run(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
			})
		}
	}
}

// cachedClock is the database's clock read every 100 ms and advanced by
// the process's monotonic clock in between: within store.MaxSkew of the
// database, without a round trip per reading.
type cachedClock struct {
	mu    sync.Mutex
	db    time.Time
	local time.Time
}

func newCachedClock(b *testing.B, s *Store) *cachedClock {
	c := &cachedClock{}
	read := func() error {
		db, err := s.Now(context.Background())
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.db, c.local = db, time.Now()
		c.mu.Unlock()
		return nil
	}
	if err := read(); err != nil {
		b.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = read()
			}
		}
	}()
	b.Cleanup(func() { close(stop); <-done })
	return c
}

func (c *cachedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.db.Add(time.Since(c.local))
}
