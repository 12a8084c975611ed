package flood_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store/memory"
)

// principal is (user, agent, session).
type principal [3]string

func (p principal) request(approvers ...string) flood.Request {
	if len(approvers) == 0 {
		approvers = []string{p[0]}
	}
	return flood.Request{User: p[0], Agent: p[1], Session: p[2], Approvers: approvers}
}

// naiveLimiter counts admissions and denials under a key function and
// nothing else: the keying is the variable under test.
type naiveLimiter struct {
	key      func(p principal) string
	n, after int
	counts   map[string]int
	denials  map[string]int
}

func newNaive(key func(principal) string, n, after int) *naiveLimiter {
	return &naiveLimiter{key: key, n: n, after: after, counts: map[string]int{}, denials: map[string]int{}}
}

func (l *naiveLimiter) admit(p principal) bool {
	k := l.key(p)
	if l.denials[k] >= l.after || l.counts[k] >= l.n {
		return false
	}
	l.counts[k]++
	return true
}

func (l *naiveLimiter) deny(p principal) { l.denials[l.key(p)]++ }

// bareSession is how every limit was keyed before principals: two tenants
// with one session id shared every count.
func bareSession(p principal) string { return p[2] }

// joined keys by the principal, but ambiguously: ("a:b", "c", "s") and
// ("a", "b:c", "s") share a key.
func joined(p principal) string { return p[0] + ":" + p[1] + ":" + p[2] }

// tenantPairs generates pairs of distinct principals that are hard to tell
// apart: the same session id under other users or agents, and the same
// bytes split differently over user, agent and session.
func tenantPairs(seed uint64, n int) [][2]principal {
	rng := rand.New(rand.NewPCG(seed, 1))
	triples := flood.Spellings(seed, n)
	var pairs [][2]principal
	for i := 1; i < len(triples); i++ {
		x, y := principal(triples[i-1]), principal(triples[i])
		if rng.IntN(2) == 0 {
			y[2] = x[2] // share the session id
		}
		if x != y && x[0] != "" && x[1] != "" && x[2] != "" && y[0] != "" && y[1] != "" && y[2] != "" {
			pairs = append(pairs, [2]principal{x, y})
		}
	}
	return pairs
}

// TestTenantsSharingSessionIDs: one tenant fills its session's rate and is
// locked out of it; another tenant whose ids are spelled to collide (the
// same session id, the same bytes split otherwise, separators, look-alike
// scripts) keeps its whole allowance. Keyed by the bare session, as
// before, or by ids joined with ':', the first tenant's flood spends the
// second's.
func TestTenantsSharingSessionIDs(t *testing.T) {
	const n, after = 3, 3
	limits := off
	limits.Session = flood.Rate{N: n, Per: time.Minute}
	limits.SessionLockout = flood.Lockout{After: after, For: 15 * time.Minute}

	pairs := tenantPairs(7, 150)
	require.Greater(t, len(pairs), 1000)
	ctx := context.Background()
	naiveHurt := map[string]int{}
	for _, p := range pairs {
		a, b := p[0], p[1]
		lim := newLimiter(t, memory.New(nil), limits, newClock())
		naives := map[string]*naiveLimiter{"bare session": newNaive(bareSession, n, after), "joined": newNaive(joined, n, after)}

		for range n {
			require.NoError(t, lim.Admit(ctx, a.request()))
			for _, nv := range naives {
				nv.admit(a)
			}
		}
		require.ErrorIs(t, lim.Admit(ctx, a.request()), flood.ErrRateLimited, "%q: the limit bites", a)
		for range after {
			require.NoError(t, lim.Decided(ctx, a.request(), false))
			for _, nv := range naives {
				nv.deny(a)
			}
		}
		require.ErrorIs(t, lim.Admit(ctx, a.request()), flood.ErrLockedOut, "%q: the lockout bites", a)

		for i := range n {
			require.NoError(t, lim.Admit(ctx, b.request()), "%q after %q: request %d", b, a, i)
		}
		var le *flood.LimitError
		require.ErrorAs(t, lim.Admit(ctx, b.request()), &le)
		assert.Equal(t, flood.ScopeSession, le.Scope)
		for name, nv := range naives {
			if !nv.admit(b) {
				naiveHurt[name]++
			}
		}
	}
	// The naive keyings fail on the pairs they confuse: the bare session
	// on every pair sharing a session id, the joined key on the splits.
	assert.Greater(t, naiveHurt["bare session"], len(pairs)/3, "bare session keys")
	assert.Greater(t, naiveHurt["joined"], 50, "joined keys")
	t.Logf("%d pairs; naive keys hurt the second tenant in %v", len(pairs), naiveHurt)
}

// TestTenantsWithDefaults is the reported case on the default limits:
// Erin's agent is denied three times in session run-9, which locks that
// session for Erin's agent and for nobody else.
func TestTenantsWithDefaults(t *testing.T) {
	ctx := context.Background()
	lim := newLimiter(t, memory.New(nil), flood.Limits{}, newClock())
	erin := principal{"user:erin", "agent:reports", "run-9"}
	dana := principal{"user:dana", "agent:reports", "run-9"}
	for range flood.DefaultSessionLockout.After {
		require.NoError(t, lim.Admit(ctx, erin.request()))
		require.NoError(t, lim.Decided(ctx, erin.request(), false))
	}
	var le *flood.LimitError
	require.ErrorAs(t, lim.Admit(ctx, erin.request()), &le)
	assert.Equal(t, flood.ScopeSession, le.Scope)
	assert.Equal(t, flood.DefaultSessionLockout.For, le.RetryAfter)
	for range flood.DefaultSessionRate.N {
		assert.NoError(t, lim.Admit(ctx, dana.request()))
	}
}

// rotations generates the session ids an agent might rotate through:
// a fresh id per request, ids that differ only in spelling, and a round
// robin over a few.
func rotations() map[string]func(i int) string {
	spell := []string{"run-9", "Run-9", "run-9 ", "run‑9", "rսn-9", "run-9\u200b", "run:9", "run/9"}
	return map[string]func(int) string{
		"fresh":       func(i int) string { return fmt.Sprintf("run-%d", i) },
		"spellings":   func(i int) string { return spell[i%len(spell)] + fmt.Sprint(i/len(spell)) },
		"round robin": func(i int) string { return fmt.Sprintf("run-%d", i%3) },
	}
}

// TestAgentRotatingSessions: an agent that opens a fresh session for each
// request gains nothing from it. On the default limits it is admitted
// the agent's rate and no more, and its user's other agent keeps the
// rest of the user's allowance; without the agent scope the rotating
// agent takes the user's whole allowance.
func TestAgentRotatingSessions(t *testing.T) {
	ctx := context.Background()
	for name, session := range rotations() {
		for _, agentScope := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/agent scope %v", name, agentScope), func(t *testing.T) {
				limits := flood.Limits{}
				if !agentScope {
					limits.Agent = flood.Rate{N: -1}
				}
				c := newClock()
				lim := newLimiter(t, memory.New(nil), limits, c)
				admitted := 0
				for i := range 500 {
					c.Set(t0.Add(time.Duration(i) * 100 * time.Millisecond))
					err := lim.Admit(ctx, principal{"user:erin", "agent:loop", session(i)}.request())
					if err == nil {
						admitted++
						continue
					}
					require.ErrorIs(t, err, flood.ErrRateLimited)
				}
				// req's agent is "agent:a", the user's other agent.
				sibling := admitN(t, lim, 5, "other-session", "user:erin")
				if agentScope {
					assert.Equal(t, int(flood.DefaultAgentRate.N), admitted)
					assert.Equal(t, 5, sibling, "the user's other agent is still heard")
				} else {
					assert.Equal(t, int(flood.DefaultUserRate.N), admitted)
					assert.Zero(t, sibling, "the rotating agent spent the user's whole allowance")
				}
			})
		}
	}
}

// TestAgentLockoutAcrossSessions: an agent denied once in each of several
// fresh sessions never reaches a session lockout, but is locked out of
// every session, a new one included, once the agent's run reaches its
// lockout. The user's other agents are not.
func TestAgentLockoutAcrossSessions(t *testing.T) {
	ctx := context.Background()
	for name, session := range rotations() {
		for _, agentScope := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/agent scope %v", name, agentScope), func(t *testing.T) {
				limits := flood.Limits{}
				if !agentScope {
					limits.AgentLockout = flood.Lockout{After: -1}
				}
				lim := newLimiter(t, memory.New(nil), limits, newClock())
				for i := range flood.DefaultAgentLockout.After {
					require.NoError(t, lim.Decided(ctx, principal{"user:erin", "agent:loop", session(i)}.request(), false))
				}
				err := lim.Admit(ctx, principal{"user:erin", "agent:loop", "brand-new"}.request())
				if !agentScope {
					assert.NoError(t, err, "no session saw enough denials, and the user's run is short of its lockout")
					return
				}
				var le *flood.LimitError
				require.ErrorAs(t, err, &le)
				assert.ErrorIs(t, err, flood.ErrLockedOut)
				assert.Equal(t, flood.ScopeAgent, le.Scope)
				assert.Equal(t, flood.DefaultAgentLockout.For, le.RetryAfter)
				assert.NoError(t, lim.Admit(ctx, principal{"user:erin", "agent:other", "brand-new"}.request()))
			})
		}
	}
}

// TestApproverFlood: many users' agents, each well within its own limits,
// prompt one on-call approver. The approver receives the inflow limit and
// no more, in any order of arrival and approver lists; without the limit
// every request reaches them. Refused requests spend no other approver's
// inflow, and an approver named twice counts once.
func TestApproverFlood(t *testing.T) {
	ctx := context.Background()
	const inflow = 30
	for seed := range uint64(8) {
		for _, limited := range []bool{true, false} {
			t.Run(fmt.Sprintf("seed %d/limited %v", seed, limited), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 2))
				limits := flood.Limits{}
				if !limited {
					limits.ApproverInflow = flood.Rate{N: -1}
				}
				c := newClock()
				lim := newLimiter(t, memory.New(nil), limits, c)
				users := 20 + rng.IntN(80)
				reached, backupReached := 0, 0
				for i := range 3 * users {
					c.Set(t0.Add(time.Duration(i) * time.Second))
					p := principal{fmt.Sprintf("user:%d", rng.IntN(users)), "agent:ops", fmt.Sprintf("run-%d", rng.IntN(3))}
					approvers := []string{"user:oncall"}
					switch rng.IntN(3) {
					case 1:
						approvers = append(approvers, "user:oncall") // named twice
					case 2:
						approvers = append([]string{"user:backup"}, approvers...)
					}
					err := lim.Admit(ctx, p.request(approvers...))
					var le *flood.LimitError
					switch {
					case err == nil:
						reached++
						if approvers[0] == "user:backup" {
							backupReached++
						}
					case errors.As(err, &le) && le.Scope == flood.ScopeApprover:
						require.True(t, limited)
						require.ErrorIs(t, err, flood.ErrRateLimited)
					default:
						require.ErrorIs(t, err, flood.ErrRateLimited, "only the users' own limits refuse")
					}
				}
				if !limited {
					assert.Greater(t, reached, 2*inflow, "without the limit, the flood reaches the approver")
					return
				}
				assert.Equal(t, inflow, reached, "the approver receives the inflow limit, exactly")
				// The backup, named beside the flooded approver, lost nothing
				// to the refusals.
				got := 0
				for i := range inflow + 5 {
					if lim.Admit(ctx, principal{fmt.Sprintf("user:b%d", i), "agent:ops", "s"}.request("user:backup")) == nil {
						got++
					}
				}
				assert.Equal(t, inflow-backupReached, got, "only admitted prompts count for the backup")
			})
		}
	}
}

// FuzzTenantsApart: for any two distinct principals, one filling its
// session's rate and lockout leaves the other's untouched.
func FuzzTenantsApart(f *testing.F) {
	f.Add("user:erin", "agent:reports", "run-9", "user:dana", "agent:reports", "run-9")
	f.Add("a:b", "c", "s", "a", "b:c", "s")
	f.Add("a", "\x01b", "s", "a\x01", "b", "s")
	f.Add("аgent", "x", "s", "agent", "x", "s")
	limits := off
	limits.Session = flood.Rate{N: 1, Per: time.Minute}
	limits.SessionLockout = flood.Lockout{After: 1, For: time.Minute}
	f.Fuzz(func(t *testing.T, u1, a1, s1, u2, a2, s2 string) {
		a, b := principal{u1, a1, s1}, principal{u2, a2, s2}
		if a == b || u1 == "" || a1 == "" || s1 == "" || u2 == "" || a2 == "" || s2 == "" {
			return
		}
		ctx := context.Background()
		lim := newLimiter(t, memory.New(nil), limits, newClock())
		require.NoError(t, lim.Admit(ctx, a.request()))
		require.ErrorIs(t, lim.Admit(ctx, a.request()), flood.ErrRateLimited)
		require.NoError(t, lim.Decided(ctx, a.request(), false))
		require.ErrorIs(t, lim.Admit(ctx, a.request()), flood.ErrLockedOut)
		require.NoError(t, lim.Admit(ctx, b.request()))
	})
}
