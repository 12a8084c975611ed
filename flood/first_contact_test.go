package flood_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// onlyTargets is limits with every principal limit off and the target
// limits as given (zero fields take the defaults).
func onlyTargets(l flood.Limits) flood.Limits {
	o := off
	o.Target, o.TargetLockout = l.Target, l.TargetLockout
	o.FirstContact, o.FirstContactLockout = l.FirstContact, l.FirstContactLockout
	o.FirstContactTarget = l.FirstContactTarget
	return o
}

// spreadAttacker is a generated attacker: one user's agents hijacked,
// each request from another agent and session, to one mail domain in
// another spelling.
type spreadAttacker struct {
	rng    *rand.Rand
	user   string
	agents int
	domain string
}

func (a spreadAttacker) next(t *testing.T) flood.Request {
	t.Helper()
	target, err := flood.EmailTarget(spellTarget(a.rng, a.domain))
	require.NoError(t, err)
	return flood.Request{
		User:      a.user,
		Agent:     fmt.Sprintf("agent:hijacked-%d", a.rng.IntN(a.agents)),
		Session:   fmt.Sprintf("s-%d", a.rng.Uint64()),
		Approvers: []string{"user:approver"},
		Target:    target,
	}
}

// TestTargetRateHoldsAgainstSpread: however many agents and sessions the
// attacker spreads over and however it spells the target, its requests to
// one target meet one counter; keyed by agent or session alone (the naive
// variant), the same attacker gets one allowance per agent or session.
func TestTargetRateHoldsAgainstSpread(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 24))
		a := spreadAttacker{rng: rng, user: "user:u", agents: 1 + rng.IntN(16), domain: "attacker.example"}
		n := int64(1 + rng.IntN(8))
		c := newClock()
		l := onlyTargets(flood.Limits{Target: flood.Rate{N: n, Per: time.Hour}, FirstContact: flood.Rate{N: -1},
			FirstContactTarget: flood.Rate{N: -1}})
		lim := newLimiter(t, memory.New(nil), l, c)

		// The naive variant keys the same rate by the agent.
		naive := o(off)
		naive.Agent = flood.Rate{N: n, Per: time.Hour}
		nlim := newLimiter(t, memory.New(nil), naive, c)

		admitted, naiveAdmitted := 0, 0
		for range 200 {
			r := a.next(t)
			if err := lim.Admit(context.Background(), r); err == nil {
				admitted++
			} else {
				var le *flood.LimitError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, flood.ScopeTarget, le.Scope)
			}
			r.Target = flood.Target{}
			if nlim.Admit(context.Background(), r) == nil {
				naiveAdmitted++
			}
		}
		assert.EqualValues(t, n, admitted, "seed %d", seed)
		if a.agents > 1 {
			assert.Greater(t, naiveAdmitted, admitted, "seed %d: keyed by agent, spreading buys more", seed)
		}
	}
}

func o(l flood.Limits) flood.Limits { return l }

// countingStore counts counter operations.
type countingStore struct {
	*memory.Store
	ops int
}

func (c *countingStore) AddCounts(ctx context.Context, ops []store.CountOp) ([]int64, error) {
	c.ops += len(ops)
	return c.Store.AddCounts(ctx, ops)
}

func (c *countingStore) AddCount(ctx context.Context, key string, w time.Time, d int64) (int64, error) {
	c.ops++
	return c.Store.AddCount(ctx, key, w, d)
}

func (c *countingStore) GetStreak(ctx context.Context, key string) (store.Streak, error) {
	c.ops++
	return c.Store.GetStreak(ctx, key)
}

func (c *countingStore) GetStreaks(ctx context.Context, keys []string) ([]store.Streak, error) {
	c.ops += len(keys)
	return c.Store.GetStreaks(ctx, keys)
}

func (c *countingStore) IncrStreak(ctx context.Context, key string, at time.Time) (int, error) {
	c.ops++
	return c.Store.IncrStreak(ctx, key, at)
}

func (c *countingStore) ResetStreak(ctx context.Context, key string) error {
	c.ops++
	return c.Store.ResetStreak(ctx, key)
}

// TestFirstContactLockoutHoldsAgainstSpread: one denial of a request to a
// target the operator's history has not seen locks it, for every agent,
// session, user and spelling, and benign approvals of the user's other
// work do not lift it. The user's principal lockout, under the same interleaving,
// is reset by every benign approval and never locks.
func TestFirstContactLockoutHoldsAgainstSpread(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 7))
		a := spreadAttacker{rng: rng, user: "user:u", agents: 4, domain: "attacker.example"}
		c := newClock()
		l := off
		l.UserLockout = flood.DefaultUserLockout
		l.FirstContactLockout = flood.DefaultFirstContactLockout
		lim := newLimiter(t, memory.New(nil), l, c)
		benign := flood.Request{User: "user:u", Agent: "agent:assist", Session: "main", Approvers: []string{"user:approver"}}

		first := a.next(t)
		adm, err := lim.Admission(ctx, first)
		require.NoError(t, err)
		require.True(t, adm.FirstContact)
		require.NoError(t, lim.Decided(ctx, first, false))
		for range 50 {
			// Benign work, approved, between the attacker's requests.
			require.NoError(t, lim.Admit(ctx, benign))
			require.NoError(t, lim.Decided(ctx, benign, true))
			c.Advance(time.Minute)
			err := lim.Admit(ctx, a.next(t))
			var le *flood.LimitError
			require.ErrorAs(t, err, &le, "seed %d", seed)
			assert.ErrorIs(t, err, flood.ErrLockedOut)
			assert.Equal(t, flood.ScopeFirstContact, le.Scope)
		}
		// Nobody in the operator's history has used the target: another
		// user's hijacked agent meets the same lockout.
		other := a.next(t)
		other.User = "user:v"
		assert.ErrorIs(t, lim.Admit(ctx, other), flood.ErrLockedOut)
	}
}

func TestFirstContactSeenAfterApproval(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	lim := newLimiter(t, memory.New(nil), onlyTargets(flood.Limits{}), c)
	tgt, err := flood.EmailTarget("ap@vendor.example")
	require.NoError(t, err)
	r := flood.Request{User: "user:u", Agent: "agent:a", Session: "s", Approvers: []string{"user:x"}, Target: tgt}

	adm, err := lim.Admission(ctx, r)
	require.NoError(t, err)
	assert.True(t, adm.FirstContact)
	require.NoError(t, lim.Decided(ctx, r, true))

	r.Agent, r.Session = "agent:b", "t"
	adm, err = lim.Admission(ctx, r)
	require.NoError(t, err)
	assert.False(t, adm.FirstContact, "approved once, the target is known to the operator's history")

	// A known target takes the target lockout (3 denials), not the
	// first-contact one (1), and no first-contact rate.
	for range flood.DefaultTargetLockout.After {
		require.NoError(t, lim.Admit(ctx, r))
		require.NoError(t, lim.Decided(ctx, r, false))
	}
	assert.ErrorIs(t, lim.Admit(ctx, r), flood.ErrLockedOut)
	c.Advance(flood.DefaultTargetLockout.For)
	assert.NoError(t, lim.Admit(ctx, r))

	// Known to the operator's history: no first contact for another user
	// either, whose run of denials of it is their own.
	r.User = "user:v"
	adm, err = lim.Admission(ctx, r)
	require.NoError(t, err)
	assert.False(t, adm.FirstContact)
}

func TestIntroduce(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	lim := newLimiter(t, memory.New(nil), onlyTargets(flood.Limits{}), c)
	tgt, err := flood.DomainTarget("partner.example")
	require.NoError(t, err)
	r := flood.Request{User: "user:u", Agent: "agent:a", Session: "s", Approvers: []string{"user:x"}, Target: tgt}
	require.NoError(t, lim.Admit(ctx, r))
	require.NoError(t, lim.Decided(ctx, r, false))
	require.ErrorIs(t, lim.Admit(ctx, r), flood.ErrLockedOut)

	// The operator introduces the target: known, and the lockout lifted.
	require.NoError(t, lim.Introduce(ctx, tgt))
	require.NoError(t, lim.Introduce(ctx, tgt), "twice is harmless")
	adm, err := lim.Admission(ctx, r)
	require.NoError(t, err)
	assert.False(t, adm.FirstContact)

	assert.ErrorIs(t, lim.Introduce(ctx, flood.Target{}), flood.ErrInvalidTarget)
}

// TestFirstContactRateBoundsTargetRotation: an attacker that rotates over
// targets it controls, each a first contact, meets the user's
// first-contact rate; known targets do not count against it.
func TestFirstContactRateBoundsTargetRotation(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	lim := newLimiter(t, memory.New(nil), onlyTargets(flood.Limits{}), c)
	known, err := flood.DomainTarget("partner.example")
	// (each rotated target is new: one request each fits its own
	// first-contact target rate)
	require.NoError(t, err)
	require.NoError(t, lim.Introduce(ctx, known))
	admitted := 0
	for i := range 40 {
		tgt, err := flood.EmailTarget(fmt.Sprintf("p@evil-%d.example", i))
		require.NoError(t, err)
		r := flood.Request{User: "user:u", Agent: fmt.Sprintf("agent:%d", i), Session: "s", Approvers: []string{"user:x"}, Target: tgt}
		if err := lim.Admit(ctx, r); err == nil {
			admitted++
		} else {
			var le *flood.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, flood.ScopeFirstContact, le.Scope)
		}
	}
	assert.EqualValues(t, flood.DefaultFirstContactRate.N, admitted)
	// A known target is still admitted.
	r := flood.Request{User: "user:u", Agent: "agent:a", Session: "s", Approvers: []string{"user:x"}, Target: known}
	assert.NoError(t, lim.Admit(ctx, r))
}

// TestNoTargetNoTargetLimits: a request without a target, as every caller
// made before targets, is counted exactly as before.
func TestNoTargetNoTargetLimits(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	l := onlyTargets(flood.Limits{Target: flood.Rate{N: 1, Per: time.Hour}, FirstContact: flood.Rate{N: 1, Per: time.Hour},
		FirstContactLockout: flood.Lockout{After: 1, For: time.Hour}})
	counted := &countingStore{Store: memory.New(nil)}
	lim := newLimiter(t, counted, l, c)
	r := flood.Request{User: "user:u", Agent: "agent:a", Session: "s", Approvers: []string{"user:x"}}
	for range 20 {
		adm, err := lim.Admission(ctx, r)
		require.NoError(t, err)
		assert.False(t, adm.FirstContact)
		require.NoError(t, lim.Decided(ctx, r, false))
	}
	assert.Zero(t, counted.ops, "every limit off and no target: no counter touched")
}

func TestTargetLimitsFailClosed(t *testing.T) {
	ctx := context.Background()
	tgt, err := flood.DomainTarget("x.example")
	require.NoError(t, err)
	r := flood.Request{User: "user:u", Agent: "agent:a", Session: "s", Approvers: []string{"user:x"}, Target: tgt}
	// Every one of the first n counter operations may fail.
	for n := range 12 {
		f := &failing{Store: memory.New(nil), left: n}
		lim := newLimiter(t, f, onlyTargets(flood.Limits{}), newClock())
		err := lim.Admit(ctx, r)
		if err != nil {
			assert.ErrorIs(t, err, flood.ErrUnavailable, "after %d operations", n)
		}
		f2 := &failing{Store: memory.New(nil), left: n}
		lim2 := newLimiter(t, f2, onlyTargets(flood.Limits{}), newClock())
		for _, approved := range []bool{false, true} {
			if err := lim2.Decided(ctx, r, approved); err != nil {
				assert.ErrorIs(t, err, flood.ErrUnavailable)
			}
		}
	}
}

func TestTargetLimitsValidate(t *testing.T) {
	bad := []flood.Limits{
		{Target: flood.Rate{Per: time.Hour}},
		{FirstContact: flood.Rate{N: 1, Per: time.Nanosecond}},
		{TargetLockout: flood.Lockout{For: time.Hour}},
		{FirstContactLockout: flood.Lockout{After: 1, For: time.Nanosecond}},
	}
	for _, l := range bad {
		_, err := flood.New(memory.New(nil), l, newClock().Now)
		assert.ErrorIs(t, err, flood.ErrInvalidLimits, "%+v", l)
	}
	lim := newLimiter(t, memory.New(nil), flood.Limits{}, newClock())
	got := lim.Limits()
	assert.Equal(t, flood.DefaultTargetRate, got.Target)
	assert.Equal(t, flood.DefaultTargetLockout, got.TargetLockout)
	assert.Equal(t, flood.DefaultFirstContactRate, got.FirstContact)
	assert.Equal(t, flood.DefaultFirstContactLockout, got.FirstContactLockout)
	assert.Equal(t, flood.DefaultFirstContactTargetRate, got.FirstContactTarget)
}

// TestFirstContactTargetRate: a burst to a new target, from any number
// of agents of any number of users, is one admission an hour until a
// request to it is approved.
func TestFirstContactTargetRate(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	rng := rand.New(rand.NewPCG(3, 3))
	a := spreadAttacker{rng: rng, user: "user:u", agents: 8, domain: "attacker.example"}
	lim := newLimiter(t, memory.New(nil), onlyTargets(flood.Limits{}), c)
	admitted := 0
	var last flood.Request
	for i := range 30 {
		r := a.next(t)
		r.User = fmt.Sprintf("user:%d", i%5)
		if err := lim.Admit(ctx, r); err == nil {
			admitted++
			last = r
		} else {
			var le *flood.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, flood.ScopeFirstContact, le.Scope)
		}
	}
	assert.Equal(t, 1, admitted)
	// Approved, the target is known: the target rate (10 an hour per
	// user) applies.
	require.NoError(t, lim.Decided(ctx, last, true))
	a.user = last.User
	admitted = 0
	for range 30 {
		if lim.Admit(ctx, a.next(t)) == nil {
			admitted++
		}
	}
	assert.EqualValues(t, flood.DefaultTargetRate.N-1, admitted)
}
