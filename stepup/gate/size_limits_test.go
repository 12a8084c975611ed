package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// allowAll allows every call: the sweep measures sizes, not a catalog's
// limits.
type allowAll struct{}

func (allowAll) Decide(context.Context, plug.Proposal) (plug.Decision, error) {
	return plug.Decision{Verdict: plug.Allow, Reason: "allowed", PolicyVersion: "sizes-v1", Class: "reversible"}, nil
}

// sizedArgs returns arguments whose canonical form is exactly n bytes, in
// one of two shapes: one long string, or many short members.
func sizedArgs(n int, members bool) json.RawMessage {
	if !members {
		const open, end = `{"a":"`, `"}`
		return json.RawMessage(open + strings.Repeat("x", n-len(open)-len(end)) + end)
	}
	var b strings.Builder
	b.WriteString("{")
	for i := 0; ; i++ {
		m := fmt.Sprintf(`"k%07d":1`, i)
		if b.Len()+len(m)+16 > n { // room for a padding member and the closing brace
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(m)
	}
	// Pad the last member's key to land exactly on n.
	s := b.String()
	pad := n - len(s) - 1
	s = s + `,"` + strings.Repeat("p", pad-5) + `":1` + "}"
	c, err := canon.Limits{MaxBytes: 2 * canon.MaxArgs}.Canonicalize([]byte(s))
	if err != nil || len(c) != n {
		// The padding is exact for the sizes the sweep uses; anything else
		// is a mistake in the test.
		panic(fmt.Sprintf("sizedArgs(%d): %d bytes, %v", n, len(c), err))
	}
	return json.RawMessage(c)
}

// sizeCase is one call of the sweep, and the size of the output its tool
// answers with.
type sizeCase struct {
	name   string
	call   stepup.Call
	output int
}

// sizeCases generates calls around every size limit a call meets: its
// arguments (canon.MaxArgs, in two shapes and at random distances), the
// sealed effect (canon.MaxEffect, by a large envelope), its rationale
// (canon.MaxText), its identifiers (store.MaxKeySize), its labels and
// delegations
// (store.MaxTaint) and its tool's answer (canon.MaxText).
func sizeCases(rng *rand.Rand) []sizeCase {
	base := func() stepup.Call {
		return stepup.Call{Tool: "write_draft", Args: json.RawMessage(`{"to":"finance@example.com"}`), Task: "t",
			Step: fmt.Sprint(rng.Int()), Session: "s", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	}
	var out []sizeCase
	add := func(name string, output int, edit func(*stepup.Call)) {
		c := base()
		edit(&c)
		out = append(out, sizeCase{name, c, output})
	}
	deltas := []int{-2, -1, 0, 1, 2, -(1 + rng.IntN(64)), 1 + rng.IntN(64)}
	for _, d := range deltas {
		for _, members := range []bool{false, true} {
			n := canon.MaxArgs + d
			add(fmt.Sprintf("args %d bytes, members %v", n, members), 0, func(c *stepup.Call) { c.Args = sizedArgs(n, members) })
		}
	}
	for _, k := range []int{64, 200, store.MaxTaint, store.MaxTaint + 1} {
		add(fmt.Sprintf("args at the limit with %d delegations of the longest name", k), 0, func(c *stepup.Call) {
			c.Args = sizedArgs(canon.MaxArgs-1, false)
			for i := range k {
				name := fmt.Sprintf("%04d", i) + strings.Repeat("n", canon.MaxPrincipalName-4)
				c.Principal.Delegations = append(c.Principal.Delegations, "agent:"+name)
			}
			c.Task, c.Step = strings.Repeat("t", store.MaxKeySize), strings.Repeat("u", store.MaxKeySize-20)+fmt.Sprint(rng.Int64())
		})
	}
	for _, d := range []int{-1, 0, 1} {
		add(fmt.Sprintf("rationale %d bytes", canon.MaxText+d), 0, func(c *stepup.Call) {
			c.Rationale = strings.Repeat("r", canon.MaxText+d)
		})
		add(fmt.Sprintf("session %d bytes", store.MaxKeySize+d), 0, func(c *stepup.Call) {
			c.Session = strings.Repeat("s", store.MaxKeySize+d)
		})
		add(fmt.Sprintf("%d taint labels", store.MaxTaint+d), 0, func(c *stepup.Call) {
			c.Taint = make([]string, store.MaxTaint+d)
			for i := range c.Taint {
				c.Taint[i] = fmt.Sprint("web-", i)
			}
		})
	}
	for _, d := range []int{-64, -1, 0, 1, 64, 1 << 20} {
		add(fmt.Sprintf("tool answers %d bytes", canon.MaxText+d), canon.MaxText+d, func(*stepup.Call) {})
	}
	return out
}

// TestEverySizeIsAcceptedOrTooLarge sweeps sizes around every limit, with
// and without the arguments in the audit rows: each call is either
// accepted end to end (stored, executed once with exactly its arguments,
// its outcome recorded, the audit chain exported and verified) or refused
// with stepup.ErrTooLarge and its denial row; never a silent denial, never
// another error, and never a tool run twice because its outcome could not
// be kept.
func TestEverySizeIsAcceptedOrTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds calls of several MiB")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 26))
	for _, auditArgs := range []bool{false, true} {
		t.Run(fmt.Sprintf("audit args %v", auditArgs), func(t *testing.T) {
			st := memory.New(nil)
			var mu sync.Mutex
			runs := map[string]int{}
			var got json.RawMessage
			output := 0
			exec := plug.ExecutorFunc(func(_ context.Context, e canon.Effect, key string) ([]byte, error) {
				mu.Lock()
				defer mu.Unlock()
				runs[key]++
				got = e.Args
				return []byte(`"` + strings.Repeat("o", max(output-2, 0)) + `"`), nil
			})
			opts := []gate.Option{gate.WithExecutor("write_draft", exec), gate.WithoutFloodControlUnsafe()}
			if auditArgs {
				opts = append(opts, gate.WithAuditArgsUnsafe())
			}
			g, err := gate.New(st, allowAll{}, stepuptest.Passkeys(st), opts...)
			require.NoError(t, err)
			accepted, tooLarge := 0, 0
			for _, c := range sizeCases(rng) {
				output = c.output
				tk, err := g.Propose(ctx, c.call)
				switch {
				case errors.Is(err, stepup.ErrTooLarge):
					tooLarge++
					assert.Equal(t, stepup.StatusDenied, tk.Status, c.name)
					continue
				case err != nil:
					t.Fatalf("%s: propose: an error other than too large: %v", c.name, err)
				case tk.Status != stepup.StatusAllowed:
					t.Fatalf("%s: %s without an error (%s): a silent refusal", c.name, tk.Status, tk.Reason)
				}
				res, err := g.Execute(ctx, tk.ID)
				require.NoError(t, err, c.name)
				assert.GreaterOrEqual(t, len(res.Output), c.output, "%s: the caller gets the whole answer", c.name)
				want, err := canon.Canonicalize(c.call.Args)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(want, got), "%s: the tool got exactly the arguments", c.name)
				again, err := g.Ticket(ctx, tk.ID)
				require.NoError(t, err)
				assert.Equal(t, stepup.StatusExecuted, again.Status, "%s: the outcome is recorded", c.name)
				accepted++
			}
			// A run whose outcome could not be recorded would stay executing
			// and be run again by recovery: every one above is executed, and
			// ran once.
			for key, n := range runs {
				assert.Equal(t, 1, n, "tool run %d times with key %s", n, key)
			}
			assert.Positive(t, accepted)
			assert.Positive(t, tooLarge)
			rows, err := st.AuditRange(ctx, time.Time{}, time.Now().Add(time.Hour))
			require.NoError(t, err)
			var export bytes.Buffer
			require.NoError(t, audit.WriteChain(&export, rows))
			for i, line := range bytes.Split(bytes.TrimSpace(export.Bytes()), []byte("\n")) {
				assert.LessOrEqual(t, len(line), audit.MaxLine, "exported row %d is longer than a reader accepts", i)
			}
			back, err := audit.ReadChain(&export)
			require.NoError(t, err, "every row the gate wrote exports and reads back")
			require.NoError(t, audit.VerifyChain(back, canon.Digest{}))
		})
	}
}
