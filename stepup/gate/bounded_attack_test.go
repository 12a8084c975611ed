//go:build unix

package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/cputime"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store/memory"
)

// boundedGate is a gate whose one tool needs approval and renders a card
// with a trusted domain, so that a proposal does every step: screen,
// parse, policy, seal, card, store.
func boundedGate(t *testing.T) *gate.Gate {
	t.Helper()
	cat, err := policy.NewCatalog("bounded-1",
		policy.Tool{Name: "mail", Title: "Mail", Class: card.ClassExternal, Trusted: []string{"example.com"}})
	require.NoError(t, err)
	g, err := gate.New(memory.New(nil), cat, &actingApprover{}, gate.WithoutFloodControlUnsafe())
	require.NoError(t, err)
	return g
}

func boundedCall() stepup.Call {
	return stepup.Call{Tool: "mail", Args: json.RawMessage(`{"to":"a@example.com"}`), Session: "s",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
}

// growing are calls whose one field grows with n: taint, delegations,
// rationale (with addresses and line breaks for the card to analyse), ids,
// argument keys naming hosts, nesting, and argument strings built to make
// an address or URL scanner backtrack.
var growing = map[string]func(n int) stepup.Call{
	"taint": func(n int) stepup.Call {
		c := boundedCall()
		for i := range n {
			c.Taint = append(c.Taint, fmt.Sprintf("web:%d", i))
		}
		return c
	},
	"delegations": func(n int) stepup.Call {
		c := boundedCall()
		for i := range n {
			c.Principal.Delegations = append(c.Principal.Delegations, fmt.Sprintf("user:u%d", i))
		}
		return c
	},
	"rationale": func(n int) stepup.Call { c := boundedCall(); c.Rationale = strings.Repeat("a@b.c \n", n); return c },
	"task":      func(n int) stepup.Call { c := boundedCall(); c.Task = strings.Repeat("a@b.c ", n); return c },
	"session":   func(n int) stepup.Call { c := boundedCall(); c.Session = strings.Repeat("s", n); return c },
	"grant":     func(n int) stepup.Call { c := boundedCall(); c.Grant = strings.Repeat("g", n); return c },
	"keys": func(n int) stepup.Call {
		c := boundedCall()
		var b strings.Builder
		b.WriteString(`{"to":"a@example.com"`)
		for i := range n / 4 {
			fmt.Fprintf(&b, `,"k%d":"x@y%d.com"`, i, i)
		}
		c.Args = json.RawMessage(b.String() + "}")
		return c
	},
	"nesting": func(n int) stepup.Call {
		c := boundedCall()
		c.Args = json.RawMessage(`{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
		return c
	},
}

// scanners are argument strings that make a naive address or URL parser
// rescan: many @s, open parentheses before an @, mailto fields, schemes,
// lists, combining marks.
var scanners = map[string]func(n int) string{
	"ats":         func(n int) string { return strings.Repeat("a@", n) + "example.com" },
	"parens":      func(n int) string { return "x" + strings.Repeat("(", n) + "@example.com" },
	"mailto":      func(n int) string { return "mailto:a@example.com?" + strings.Repeat("cc=a@b.com&", n/8) },
	"schemes":     func(n int) string { return strings.Repeat("https://", n/4) },
	"angles":      func(n int) string { return strings.Repeat("<a@b.c", n/4) },
	"commas":      func(n int) string { return strings.Repeat("a@b.co,", n/4) },
	"marks":       func(n int) string { return "a" + strings.Repeat("\u0301", n) },
	"backslashes": func(n int) string { return "https://" + strings.Repeat(`\`, n) + "example.com" },
	"quoted":      func(n int) string { return `"` + strings.Repeat(`\"`, n) + `@example.com` },
}

// costOf is the least CPU time, of five tries, of proposing the call mk
// returns (each with a fresh step, so none merges with another).
func costOf(t *testing.T, g *gate.Gate, mk func() stepup.Call) time.Duration {
	t.Helper()
	best := time.Duration(1 << 62)
	for i := range 5 {
		c := mk()
		c.Step = fmt.Sprintf("%d-%d", i, rand.Int())
		start := cputime.Process()
		tk, err := g.Propose(context.Background(), c)
		best = min(best, cputime.Process()-start)
		requireRefusal(t, err)
		require.NotEmpty(t, tk.Status)
	}
	return best
}

// TestProposeWorkIsLinear: growing any one field of a call eightfold
// makes Propose (card included) cost far less than the 64 times a
// quadratic step would. Costs below a millisecond count as one, so noise
// on tiny figures cannot fail the test.
func TestProposeWorkIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("measures CPU time")
	}
	g := boundedGate(t)
	floor := time.Millisecond
	ratio := func(small, large time.Duration) float64 {
		return float64(max(large, floor)) / float64(max(small, floor))
	}
	for name, f := range growing {
		small, large := costOf(t, g, func() stepup.Call { return f(2000) }), costOf(t, g, func() stepup.Call { return f(16000) })
		assert.Less(t, ratio(small, large), 24.0, "%s: %v then %v", name, small, large)
	}
	for name, f := range scanners {
		mk := func(n int) func() stepup.Call {
			return func() stepup.Call {
				c := boundedCall()
				b, err := json.Marshal(map[string]string{"to": f(n)})
				require.NoError(t, err)
				c.Args = b
				return c
			}
		}
		small, large := costOf(t, g, mk(4000)), costOf(t, g, mk(32000))
		assert.Less(t, ratio(small, large), 24.0, "%s: %v then %v", name, small, large)
	}
}

// TestProposeNeverPanics: calls whose every field is drawn from hostile
// values (empty, huge, invalid UTF-8, NULs, reserved and malformed ids,
// non-object and duplicate-key arguments) get a ticket or an error, never
// a panic, and never a runnable ticket for a malformed principal.
func TestProposeNeverPanics(t *testing.T) {
	g := boundedGate(t)
	rng := rand.New(rand.NewPCG(3, 5))
	texts := []string{"", "a", "\xff", "a\x00b", strings.Repeat("x", 70000), "policy:v", "grant:g", "gate:grant",
		"user:dana", "agent:reports", "user:Dana", "\u202e", "mail", "run_shell"}
	args := []string{`{"to":"a@example.com"}`, `[]`, `null`, `"x"`, `{"a":1,"a":2}`, `{"a":1e400}`, `{`, ``,
		`{"a":"\ud800"}`, `{"a":0.30000000000000001}`, `{"to":"` + strings.Repeat("@", 50000) + `"}`}
	pick := func() string { return texts[rng.IntN(len(texts))] }
	for range 400 {
		c := stepup.Call{Tool: pick(), Args: json.RawMessage(args[rng.IntN(len(args))]), Task: pick(), Step: pick(),
			Session: pick(), Rationale: pick(), Grant: pick(), Taint: []string{pick(), pick()},
			Principal: canon.Principal{User: pick(), Agent: pick(), Delegations: []string{pick()}}}
		if rng.IntN(3) == 0 {
			c.Tool, c.Session = "mail", "s"
		}
		tk, err := g.Propose(context.Background(), c)
		if err == nil && tk.Status.Runnable() {
			assert.NoError(t, c.Principal.Check(), "a malformed principal got a runnable ticket: %+v", c.Principal)
		}
	}
}
