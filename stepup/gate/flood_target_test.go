package gate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// spellingsOf are spellings of recipients at one registrable domain an
// attacker controls (dom, given in A-label form when it has a Unicode
// one, uni): mailboxes, plus-addressing, subdomains, letter case, a
// trailing dot, the Unicode form.
func spellingsOf(dom, uni string, i int) []string {
	out := []string{
		fmt.Sprintf("payout+%d@%s", i, dom), fmt.Sprintf("PAYOUT%d@%s.", i, strings.ToUpper(dom)),
		fmt.Sprintf("x%d@mail.%s", i, dom), fmt.Sprintf("x%d@a.b.%s.", i, dom),
	}
	if uni != "" {
		out = append(out, fmt.Sprintf("y%d@%s", i, uni), fmt.Sprintf("y%d@MAIL.%s", i, strings.ToUpper(uni)))
	}
	return out
}

// disguised is the i-th request of an attacker that disguises every
// request and spreads them over agents, sessions and users: no two are
// alike, none merges, every principal limit sees a fresh allowance.
func disguised(rng *rand.Rand, to string, i int, users int) stepup.Call {
	c := sendEmail(to)
	c.Args = []byte(fmt.Sprintf(`{"to":%q,"subject":"Invoice %d-%d","attachment":"q3.csv"}`, to, i, rng.IntN(1e6)))
	c.Session, c.Step = fmt.Sprintf("sess-%d", i), fmt.Sprintf("s-%d", i)
	c.Principal.Agent = fmt.Sprintf("agent:a%d", i)
	if u := i % users; u > 0 { // user:dana, whom the harness's approver approves for, and others
		c.Principal.User = fmt.Sprintf("user:u%d", u)
	}
	return c
}

// targetBlind is flood control that never sees where an effect goes, as
// a gate that did not pass the target would be.
type targetBlind struct{ *flood.Limiter }

func (b targetBlind) Admit(ctx context.Context, r flood.Request) error {
	r.Target = flood.Target{}
	return b.Limiter.Admit(ctx, r)
}

func (b targetBlind) Decided(ctx context.Context, r flood.Request, approved bool) error {
	r.Target = flood.Target{}
	return b.Limiter.Decided(ctx, r, approved)
}

// floodTargets are the attackers' domains, in A-label form with the
// Unicode form when there is one.
var floodTargets = [][2]string{{"evil.net", ""}, {"attacker.co.uk", ""}, {"xn--bcher-kva.de", "bücher.de"}, {"evil.example.org", ""}}

// TestFloodTargetHoldsTheDisguisedSpreadAttacker: requests from a fresh
// agent, session and user each time, every one disguised, all to one
// domain the operator's history has not seen, in every spelling of it:
// the gate admits one card an hour to it (the first-contact target rate)
// however they are spread. A gate blind to the target admits every one.
func TestFloodTargetHoldsTheDisguisedSpreadAttacker(t *testing.T) {
	const n = 24
	for _, tg := range floodTargets {
		for _, blind := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s blind=%v", tg[0], blind), func(t *testing.T) {
				ctx := context.Background()
				h := stepuptest.NewGate(t, nil)
				if blind {
					h = stepuptest.NewGateWith(t, nil, nil, gate.WithFlood(targetBlind{limiterOf(t, h)}))
				}
				rng := rand.New(rand.NewPCG(uint64(len(tg[0])), 7))
				parked := 0
				for i := range n {
					sp := spellingsOf(tg[0], tg[1], i)
					tk, err := h.Gate.Propose(ctx, disguised(rng, sp[rng.IntN(len(sp))], i, 3))
					require.NoError(t, err)
					switch tk.Status {
					case stepup.StatusPending:
						parked++
					case stepup.StatusDenied:
						assert.Contains(t, tk.Reason, "recipient not seen before", "refused by the first-contact rule")
					default:
						t.Fatalf("status %s", tk.Status)
					}
				}
				if blind {
					assert.Equal(t, n, parked, "without the target every disguised request is a card")
				} else {
					assert.Equal(t, int(flood.DefaultFirstContactTargetRate.N), parked, "one card an hour to a target not seen before")
				}
			})
		}
	}
}

// limiterOf is flood's default limiter over h's store and clock.
func limiterOf(t *testing.T, h *stepuptest.Harness) *flood.Limiter {
	return limiter(t, h.Store, h.Clock, flood.Limits{})
}

// TestFloodTargetKnownAfterAnApproval: once a request to a target is
// approved the target is known: first contact no longer holds it, and
// the per-user target rate does (10 an hour by default), over fresh
// agents and sessions and any spelling.
func TestFloodTargetKnownAfterAnApproval(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	first, err := h.Gate.Propose(ctx, disguised(rng, "payout@evil.net", 0, 1))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, first.Status)
	_, err = h.Approve(first.ID)
	require.NoError(t, err)
	parked := 1 // the approved one counted against the target rate
	for i := 1; i < 3*int(flood.DefaultTargetRate.N); i++ {
		sp := spellingsOf("evil.net", "", i)
		tk, err := h.Gate.Propose(ctx, disguised(rng, sp[rng.IntN(len(sp))], i, 1))
		require.NoError(t, err)
		if tk.Status == stepup.StatusPending {
			parked++
			continue
		}
		assert.Contains(t, tk.Reason, "this user to this recipient")
	}
	assert.Equal(t, int(flood.DefaultTargetRate.N), parked)
}

// TestFloodTargetLockout: one denial of a request to a target not seen
// before locks every user out of it for a day (first-contact lockout);
// denials in a row of one user's requests to a known target lock that
// user out of it (target lockout), whichever agent and session asks.
func TestFloodTargetLockout(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	t.Run("first contact", func(t *testing.T) {
		h := stepuptest.NewGate(t, nil)
		tk, err := h.Gate.Propose(ctx, disguised(rng, "a@evil.net", 0, 1))
		require.NoError(t, err)
		_, err = h.Deny(tk.ID, "")
		require.NoError(t, err)
		h.Clock.Advance(2 * flood.DefaultFirstContactTargetRate.Per) // past the rate: the lockout alone
		for i := 1; i < 6; i++ {
			tk, err := h.Gate.Propose(ctx, disguised(rng, fmt.Sprintf("b%d@Mail.Evil.NET.", i), i, 5))
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusDenied, tk.Status)
			assert.Contains(t, tk.Reason, "locked out")
		}
		other, err := h.Gate.Propose(ctx, disguised(rng, "a@other-domain.net", 9, 1))
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, other.Status, "another target is not locked")
	})
	t.Run("known target", func(t *testing.T) {
		h := stepuptest.NewGate(t, nil)
		tk, err := h.Gate.Propose(ctx, disguised(rng, "a@evil.net", 0, 1))
		require.NoError(t, err)
		_, err = h.Approve(tk.ID) // known from now on
		require.NoError(t, err)
		for i := 1; i <= flood.DefaultTargetLockout.After; i++ {
			tk, err := h.Gate.Propose(ctx, disguised(rng, fmt.Sprintf("x%d@evil.net", i), i, 1))
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			_, err = h.Deny(tk.ID, "")
			require.NoError(t, err)
		}
		tk, err = h.Gate.Propose(ctx, disguised(rng, "z@sub.evil.net", 50, 1))
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusDenied, tk.Status)
		assert.Contains(t, tk.Reason, "locked out")
		assert.Contains(t, tk.Reason, "this user to this recipient")
	})
}

// TestFloodTargetSparesTrustedRecipients: recipients the catalog trusts
// are the operator's own, not a target: requests to them, however many
// agents send them, meet only the principal limits.
func TestFloodTargetSparesTrustedRecipients(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	rng := rand.New(rand.NewPCG(8, 9))
	for i := range 12 {
		tk, err := h.Gate.Propose(ctx, disguised(rng, fmt.Sprintf("finance+%d@example.com", i), i, 1))
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	}
}
