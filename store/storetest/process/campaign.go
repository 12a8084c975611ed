package process

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// The kill campaign's shape.
const (
	campaignLength = 3 * time.Second        // how long gates run and die
	campaignLease  = 300 * time.Millisecond // each execution's lease
)

// runGate plays one gate of the kill campaign until it is killed: whole
// approval cycles, each decision with its row, and recovery of executions
// whose lease expired, as a live gate runs it in the background. With
// outages, the database may vanish under it at any statement: an error
// that is none of the store's refusals drops the cycle, as a gate drops a
// request whose connection broke, and leaves whatever committed to
// recovery.
func runGate(ctx context.Context, t *testing.T, s store.Store, racer string, outages bool) {
	owner := fmt.Sprintf("gate-%s-%d", racer, os.Getpid()) // a restarted gate is a new owner
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	// A gate that waited for the write lock longer than store.MaxSkew is
	// refused and drops the cycle, leaving its ticket where it was; any
	// other error fails the campaign, unless it is an outage's.
	check := func(what string, err error) bool {
		if err != nil && !errors.Is(err, store.ErrClockSkew) && !(outages && transient(err)) {
			t.Fatalf("%s: %v", what, err)
		}
		if err != nil && outages && transient(err) {
			time.Sleep(10 * time.Millisecond) // the database is away
		}
		return err == nil
	}
	clock := func() (time.Time, bool) {
		at, err := s.Now(ctx)
		return at.UTC().Truncate(time.Millisecond), check("now", err)
	}
	claimAt := func(key string, at time.Time) store.Claim {
		return store.Claim{Key: key, Owner: owner, At: at, LeaseUntil: at.Add(campaignLease)}
	}
	report("ready")
	for {
		if !recoverLeases(ctx, s, clock, claimAt, check) {
			continue
		}
		at, ok := clock()
		if !ok {
			continue
		}
		n := int(r.Int32()) // distinct effects: nothing merges
		a, _, err := s.Park(ctx, fixture.TicketAt("campaign", "u1", n, at), store.Caps{}, fixture.Note("park"))
		if !check("park", err) {
			continue
		}
		if at, ok = clock(); !ok {
			continue
		}
		_, err = s.Resolve(ctx, a.ID, fixture.Approve(at), fixture.Note("approve"))
		if !check("approve", err) {
			continue
		}
		if at, ok = clock(); !ok {
			continue
		}
		a, err = s.Consume(ctx, a.ID, claimAt("key-"+a.ID, at), fixture.Note("consume"))
		if !check("consume", err) {
			continue
		}
		if at, ok = clock(); !ok {
			continue
		}
		if err := s.Renew(ctx, a.ID, owner, a.Fence, at.Add(campaignLease)); !errors.Is(err, store.ErrFenced) {
			check("renew", err) // fenced: the lease expired and another gate took it over
		}
		if at, ok = clock(); !ok {
			continue
		}
		_, err = s.Finish(ctx, a.ID, a.Fence, fixture.Done(at), fixture.Note("finish"))
		if !errors.Is(err, store.ErrFenced) {
			check("finish", err)
		}
	}
}

// transient reports an error that is none of the store's refusals: a
// broken connection, a database shutting down or starting.
func transient(err error) bool {
	for _, refusal := range []error{store.ErrNotFound, store.ErrDuplicate, store.ErrInvalid, store.ErrTooLarge,
		store.ErrResolved, store.ErrExpired, store.ErrNotApproved, store.ErrConsumed, store.ErrFenced,
		store.ErrLeaseLive, store.ErrRevoked, store.ErrClockSkew, store.ErrPendingCap, store.ErrCounter,
		store.ErrGrantUsedUp, store.ErrClosed} {
		if errors.Is(err, refusal) {
			return false
		}
	}
	return true
}

// recoverLeases reclaims and finishes every execution whose lease expired;
// another gate may win any of them, which is not an error. It reports
// whether it could list them.
func recoverLeases(ctx context.Context, s store.Store, clock func() (time.Time, bool),
	claimAt func(string, time.Time) store.Claim, check func(string, error) bool) bool {
	at, ok := clock()
	if !ok {
		return false
	}
	expired, err := s.Expired(ctx, at, 0)
	if !check("expired", err) {
		return false
	}
	for _, e := range expired {
		if at, ok = clock(); !ok {
			return false
		}
		a, err := s.Reclaim(ctx, e.ID, e.Fence, claimAt("", at), fixture.Note("reclaim"))
		if err != nil {
			continue // fenced, renewed or refused for skew meanwhile
		}
		if at, ok = clock(); !ok {
			return false
		}
		_, err = s.Finish(ctx, a.ID, a.Fence, fixture.Done(at), fixture.Note("finish"))
		if !errors.Is(err, store.ErrFenced) {
			check("finish", err)
		}
	}
	return true
}

// testProcessCampaign runs gates in separate processes on one database and
// kills one with SIGKILL every few hundred milliseconds, starting another
// in its place, for a few seconds. Then it recovers every execution left
// behind and checks, from the database alone, that every decision it holds
// has exactly its audit row and no row names a decision it does not hold,
// that the chain verifies from the start with times that never decrease,
// and that nothing is left executing.
func testProcessCampaign(t *testing.T, p Backend) { campaign(t, p, nil) }

// RunRestart runs the kill campaign of [Run] with the
// database server itself stopped abruptly and started again (p.Restart)
// once, a third of the way in, while the gates are busy, and killed gates
// replaced as before. Gates meet broken connections mid-statement; a
// statement whose answer was lost may or may not have committed. The same
// checks follow: nothing left executing after recovery, every decision
// with exactly its audit row, the chain whole. Like Run, the
// calling test re-executes its binary and must do nothing else first.
func RunRestart(t *testing.T, p Backend) {
	if role := os.Getenv(envRole); role != "" && os.Getenv(envName) == t.Name() {
		runChild(t, p, role)
		return
	}
	if p.Restart == nil {
		t.Fatal("process: RunRestart needs Backend.Restart")
	}
	if p.Racers < 2 {
		p.Racers = 3
	}
	restarted := false
	campaign(t, p, func(elapsed time.Duration) {
		if !restarted && elapsed >= campaignLength/3 {
			restarted = true
			p.Restart(t)
		}
	})
	require.True(t, restarted, "the database was restarted mid-load")
}

// campaign is the kill campaign; between kills it calls between, if set,
// with the time since the campaign began. A campaign with between set is
// one with outages: its gates outlive broken connections.
func campaign(t *testing.T, p Backend, between func(elapsed time.Duration)) {
	ctx := t.Context()
	target := p.Create(t)
	name := t.Name()
	if between == nil {
		name = name[:strings.LastIndex(name, "/")]
	}
	role := "gate"
	if between != nil {
		role = "outage-gate"
	}
	start := func(racer int) *child {
		c := startChild(t, name, role, target, racer, nil)
		_, err := c.await("ready")
		require.NoError(t, err)
		return c
	}
	gates := make([]*child, p.Racers)
	for i := range gates {
		gates[i] = start(i)
	}
	r := rand.New(rand.NewPCG(7, 7))
	kills := 0
	began := time.Now()
	for end := began.Add(campaignLength); time.Now().Before(end); {
		time.Sleep(100*time.Millisecond + time.Duration(r.Int64N(int64(200*time.Millisecond))))
		if between != nil {
			between(time.Since(began))
		}
		i := r.IntN(len(gates))
		require.NoError(t, gates[i].cmd.Process.Kill())
		_ = gates[i].cmd.Wait()
		assert.False(t, gates[i].cmd.ProcessState.Exited(), "gate %d died by signal, not by its own error", i)
		kills++
		gates[i] = start(i)
	}
	for _, g := range gates {
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
	}

	// A killed gate's last statement may still be committed by the
	// database after the kill (it was sent): let it land before looking.
	time.Sleep(campaignLease / 2)
	s := p.Open(t, target)
	clock := func() (time.Time, bool) { return fixture.Now(t, s), true }
	claimAt := func(key string, at time.Time) store.Claim {
		return store.Claim{Key: key, Owner: "recovery", At: at, LeaseUntil: at.Add(campaignLease)}
	}
	strict := func(what string, err error) bool {
		if err != nil && !errors.Is(err, store.ErrClockSkew) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil
	}
	for deadline := time.Now().Add(10 * campaignLease); ; {
		recoverLeases(ctx, s, clock, claimAt, strict)
		left, _, err := s.List(ctx, store.Filter{States: []store.State{store.Executing}})
		require.NoError(t, err)
		if len(left) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "executions left behind are recovered once their leases expire")
		time.Sleep(campaignLease / 3)
	}

	rows := fixture.Chain(t, s)
	type key struct{ id, decision string }
	count := map[key]int{}
	for _, r := range rows {
		count[key{r.TicketID, r.Decision}]++
	}
	var tickets []store.Approval
	for f := (store.Filter{Limit: store.MaxListLimit}); ; {
		page, next, err := s.List(ctx, f)
		require.NoError(t, err)
		tickets = append(tickets, page...)
		if next == "" {
			break
		}
		f.After = next
	}
	require.NotEmpty(t, tickets)
	seen := map[string]bool{}
	states, reclaims := map[store.State]int{}, 0
	for _, a := range tickets {
		seen[a.ID] = true
		states[a.State]++
		reclaims += int(max(a.Fence-1, 0))
		want := map[string]int{"park": 1}
		switch a.State {
		case store.Pending:
		case store.Approved:
			want["approve"] = 1
		case store.Done:
			want["approve"], want["consume"], want["reclaim"], want["finish"] = 1, 1, int(a.Fence-1), 1
		default:
			t.Errorf("ticket %s ended %s", a.ID, a.State)
		}
		for _, d := range []string{"park", "approve", "consume", "reclaim", "finish"} {
			assert.Equal(t, want[d], count[key{a.ID, d}], "ticket %s (%s): %s rows", a.ID, a.State, d)
		}
	}
	for k := range count {
		assert.True(t, seen[k.id], "a row names a ticket the store does not hold")
	}
	t.Logf("%d gates killed; %d tickets %v, %d reclaimed; %d rows", kills, len(tickets), states, reclaims, len(rows))
}
