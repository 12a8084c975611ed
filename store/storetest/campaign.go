package storetest

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
)

// The kill campaign's shape.
const (
	campaignLength = 3 * time.Second        // how long gates run and die
	campaignLease  = 300 * time.Millisecond // each execution's lease
)

// runGate plays one gate of the kill campaign until it is killed: whole
// approval cycles, each decision with its row, and recovery of executions
// whose lease expired, as a live gate runs it in the background.
func runGate(ctx context.Context, t *testing.T, s store.Store, racer string) {
	owner := fmt.Sprintf("gate-%s-%d", racer, os.Getpid()) // a restarted gate is a new owner
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	claimNow := func(key string) store.Claim {
		at := now(t, s)
		return store.Claim{Key: key, Owner: owner, At: at, LeaseUntil: at.Add(campaignLease)}
	}
	// A gate that waited for the write lock longer than store.MaxSkew is
	// refused and drops the cycle, leaving its ticket where it was; any
	// other error fails the campaign.
	check := func(what string, err error) bool {
		if err != nil && !errors.Is(err, store.ErrClockSkew) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil
	}
	report("ready")
	for {
		recoverLeases(ctx, t, s, claimNow)
		n := int(r.Int32()) // distinct effects: nothing merges
		a, _, err := s.Park(ctx, TicketAt("campaign", "u1", n, now(t, s)), store.Caps{}, note("park"))
		if !check("park", err) {
			continue
		}
		_, err = s.Resolve(ctx, a.ID, approve(now(t, s)), note("approve"))
		if !check("approve", err) {
			continue
		}
		a, err = s.Consume(ctx, a.ID, claimNow("key-"+a.ID), note("consume"))
		if !check("consume", err) {
			continue
		}
		if err := s.Renew(ctx, a.ID, owner, a.Fence, now(t, s).Add(campaignLease)); !errors.Is(err, store.ErrFenced) {
			check("renew", err) // fenced: the lease expired and another gate took it over
		}
		_, err = s.Finish(ctx, a.ID, a.Fence, done(now(t, s)), note("finish"))
		if !errors.Is(err, store.ErrFenced) {
			check("finish", err)
		}
	}
}

// recoverLeases reclaims and finishes every execution whose lease expired;
// another gate may win any of them, which is not an error.
func recoverLeases(ctx context.Context, t testing.TB, s store.Store, claimNow func(string) store.Claim) int {
	expired, err := s.Expired(ctx, now(t, s), 0)
	if err != nil {
		t.Fatalf("expired: %v", err)
	}
	n := 0
	for _, e := range expired {
		a, err := s.Reclaim(ctx, e.ID, e.Fence, claimNow(""), note("reclaim"))
		if err != nil {
			continue // fenced, renewed or refused for skew meanwhile
		}
		if _, err := s.Finish(ctx, a.ID, a.Fence, done(now(t, s)), note("finish")); err == nil {
			n++
		}
	}
	return n
}

// testProcessCampaign runs gates in separate processes on one database and
// kills one with SIGKILL every few hundred milliseconds, starting another
// in its place, for a few seconds. Then it recovers every execution left
// behind and checks, from the database alone, that every decision it holds
// has exactly its row and no row names a decision it does not hold, that
// the chain verifies from the start with times that never decrease, and
// that nothing is left executing.
func testProcessCampaign(t *testing.T, p Processes) {
	ctx := t.Context()
	target := p.Create(t)
	name := t.Name()[:strings.LastIndex(t.Name(), "/")]
	start := func(racer int) *child {
		c := startChild(t, name, "gate", target, racer, nil)
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
	for end := time.Now().Add(campaignLength); time.Now().Before(end); {
		time.Sleep(100*time.Millisecond + time.Duration(r.Int64N(int64(200*time.Millisecond))))
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
	claimNow := func(key string) store.Claim {
		at := now(t, s)
		return store.Claim{Key: key, Owner: "recovery", At: at, LeaseUntil: at.Add(campaignLease)}
	}
	for deadline := time.Now().Add(10 * campaignLease); ; {
		recoverLeases(ctx, t, s, claimNow)
		left, _, err := s.List(ctx, store.Filter{States: []store.State{store.Executing}})
		require.NoError(t, err)
		if len(left) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "executions left behind are recovered once their leases expire")
		time.Sleep(campaignLease / 3)
	}

	rows := chain(t, s)
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
