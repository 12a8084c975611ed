package flood_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// replicaLimits are small enough that a few hundred racing requests hit
// every one of them.
var replicaLimits = flood.Limits{
	Session:        flood.Rate{N: 4, Per: time.Minute},
	Agent:          flood.Rate{N: 6, Per: time.Minute},
	User:           flood.Rate{N: 10, Per: time.Minute},
	ApproverInflow: flood.Rate{N: 12, Per: time.Minute},
	SessionLockout: flood.Lockout{After: -1},
	AgentLockout:   flood.Lockout{After: 3, For: time.Hour},
	UserLockout:    flood.Lockout{After: -1},
}

// raceAdmit sends requests from many goroutines through two limiters, at
// one instant, from tenants whose session ids collide, half of them also
// prompting one on-call approver. It returns how many were admitted per
// scope's subject ("session u a s", "agent u a", "user u", "approver a").
func raceAdmit(t *testing.T, replicas [2]*flood.Limiter, goroutines, each int) map[string]int {
	ctx := context.Background()
	var (
		mu       sync.Mutex
		admitted []flood.Request
		wg       sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for range each {
				r := flood.Request{
					User:    fmt.Sprintf("user:%d", rng.IntN(3)),
					Agent:   []string{"agent:a", "agent:b"}[rng.IntN(2)],
					Session: []string{"run-9", "run:9", "9"}[rng.IntN(3)],
				}
				r.Approvers = []string{r.User}
				if rng.IntN(2) == 0 {
					r.Approvers = append(r.Approvers, "user:oncall")
				}
				err := replicas[rng.IntN(2)].Admit(ctx, r)
				if err != nil {
					assert.ErrorIs(t, err, flood.ErrRateLimited)
					continue
				}
				mu.Lock()
				admitted = append(admitted, r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	per := map[string]int{}
	for _, r := range admitted {
		per["session "+r.User+" "+r.Agent+" "+r.Session]++
		per["agent "+r.User+" "+r.Agent]++
		per["user "+r.User]++
		for _, a := range r.Approvers {
			per["approver "+a]++
		}
	}
	t.Logf("%d admitted of %d; on-call approver reached %d times", len(admitted), goroutines*each, per["approver user:oncall"])
	return per
}

// overLimits lists the subjects admitted more often than their limit.
func overLimits(per map[string]int) []string {
	limit := map[string]int64{"session": replicaLimits.Session.N, "agent": replicaLimits.Agent.N,
		"user": replicaLimits.User.N, "approver": replicaLimits.ApproverInflow.N}
	var over []string
	for k, n := range per {
		var scope string
		_, _ = fmt.Sscan(k, &scope)
		if int64(n) > limit[scope] {
			over = append(over, k)
		}
	}
	return over
}

// raceReplicas: every limit holds over both replicas together, under a
// race. Then denials recorded on one replica race admissions on the
// other, and once they are in, the agent is locked out on both.
func raceReplicas(t *testing.T, replicas [2]*flood.Limiter, goroutines, each int) {
	ctx := context.Background()
	per := raceAdmit(t, replicas, goroutines, each)
	assert.Empty(t, overLimits(per), "admitted over a limit across replicas")
	assert.Positive(t, per["approver user:oncall"])

	var wg sync.WaitGroup

	// Denials on replica 0 race admissions on replica 1.
	erin := flood.Request{User: "user:erin", Agent: "agent:loop", Approvers: []string{"user:erin"}}
	for i := range replicaLimits.AgentLockout.After {
		wg.Go(func() {
			r := erin
			r.Session = fmt.Sprintf("run-%d", i)
			assert.NoError(t, replicas[0].Decided(ctx, r, false))
		})
		wg.Go(func() {
			r := erin
			r.Session = fmt.Sprintf("other-%d", i)
			if err := replicas[1].Admit(ctx, r); err != nil {
				assert.ErrorIs(t, err, flood.ErrLockedOut)
			}
		})
	}
	wg.Wait()
	for _, lim := range replicas {
		r := erin
		r.Session = "fresh"
		assert.ErrorIs(t, lim.Admit(ctx, r), flood.ErrLockedOut)
	}
	r := erin
	r.Session = "fresh"
	require.NoError(t, replicas[1].Decided(ctx, r, true))
	assert.NoError(t, replicas[0].Admit(ctx, r), "an approval on one replica ends the run on the other")
}

func TestReplicasHoldEveryLimit(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			var a, b store.Counters
			goroutines := 8
			if name == "memory" {
				st := memory.New(nil)
				a, b = st, st
			} else {
				a, b = openSQLiteReplicas(t)
				goroutines = 4 // every count is a durable write
			}
			c := newClock()
			raceReplicas(t, [2]*flood.Limiter{newLimiter(t, a, replicaLimits, c), newLimiter(t, b, replicaLimits, c)}, goroutines, 40)
		})
	}
	// The naive variant: each replica counts in its own store, so each
	// limit is admitted once per replica.
	c := newClock()
	per := raceAdmit(t, [2]*flood.Limiter{newLimiter(t, memory.New(nil), replicaLimits, c),
		newLimiter(t, memory.New(nil), replicaLimits, c)}, 8, 40)
	assert.NotEmpty(t, overLimits(per), "counters per replica must let limits be exceeded")
}
