package gate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// auditStore is what the refusal tests read back.
type auditStore interface {
	store.Store
	AuditRange(ctx context.Context, from, to time.Time) ([]audit.Record, error)
}

// oversizedCalls returns the class of calls with one field over the
// store's bounds: every identifier one byte and a kilobyte over, every
// list one entry over, the rationale over its bound.
func oversizedCalls() map[string]stepup.Call {
	big := func(n int) string { return strings.Repeat("x", n) }
	out := map[string]stepup.Call{}
	for _, n := range []int{store.MaxKeySize + 1, store.MaxKeySize + 1000} {
		fields := map[string]func(c *stepup.Call){
			"tool":       func(c *stepup.Call) { c.Tool = big(n) },
			"task":       func(c *stepup.Call) { c.Task = big(n) },
			"step":       func(c *stepup.Call) { c.Step = big(n) },
			"session":    func(c *stepup.Call) { c.Session = big(n) },
			"grant":      func(c *stepup.Call) { c.Grant = big(n) },
			"user":       func(c *stepup.Call) { c.Principal.User = "user:" + big(n) },
			"agent":      func(c *stepup.Call) { c.Principal.Agent = "agent:" + big(n) },
			"delegation": func(c *stepup.Call) { c.Principal.Delegations = []string{"agent:" + big(n)} },
			"taint":      func(c *stepup.Call) { c.Taint = []string{"read", big(n)} },
		}
		for name, f := range fields {
			c := sendEmail("finance@example.com")
			f(&c)
			out[fmt.Sprintf("%s of %d bytes", name, n)] = c
		}
	}
	for _, n := range []int{store.MaxTaint + 1, 10 * store.MaxTaint} {
		c := sendEmail("finance@example.com")
		for i := range n {
			c.Taint = append(c.Taint, fmt.Sprintf("read %d", i))
		}
		out[fmt.Sprintf("%d taint labels", n)] = c
		c = sendEmail("finance@example.com")
		for i := range n {
			c.Principal.Delegations = append(c.Principal.Delegations, fmt.Sprintf("agent:d%d", i))
		}
		out[fmt.Sprintf("%d delegations", n)] = c
	}
	c := sendEmail("finance@example.com")
	c.Rationale = big(store.MaxFieldSize + 1)
	out["rationale over its bound"] = c
	return out
}

// TestEveryRefusalHasAnAuditRow: a call with any field over the store's
// bounds is denied, like any other refusal, with an audit row that records
// the field by hash and size, keeps the chain verifiable and fits the
// store, on memory and on SQLite. Before, an oversized identifier or too
// many taint labels made Propose return a store error with no row.
func TestEveryRefusalHasAnAuditRow(t *testing.T) {
	ctx := context.Background()
	backends := map[string]func(t *testing.T) auditStore{
		"memory": func(*testing.T) auditStore { return newWorld(t).Store },
		"sqlite": func(t *testing.T) auditStore { return openSQLite(t, filepath.Join(t.TempDir(), "asu.db")) },
	}
	for bname, open := range backends {
		for name, c := range oversizedCalls() {
			t.Run(bname+"/"+name, func(t *testing.T) {
				st := open(t)
				g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
				require.NoError(t, err)
				tk, err := g.Propose(ctx, c)
				require.ErrorIs(t, err, stepup.ErrTooLarge, "a call over a size limit is refused as too large, not as a store error")
				assert.Equal(t, stepup.StatusDenied, tk.Status)
				assert.Contains(t, tk.Reason, "size bound")
				rows, err := st.AuditRange(ctx, time.Time{}, time.Now().Add(24*time.Hour))
				require.NoError(t, err)
				require.Len(t, rows, 1, "one row for the refusal")
				assert.Equal(t, string(tk.ID), rows[0].TicketID)
				assert.Equal(t, audit.DecisionDeny, rows[0].Decision)
				assert.NoError(t, audit.VerifyChain(rows, canon.Digest{}))
				text := fmt.Sprint(rows[0])
				assert.Contains(t, text, "size bound")
				assert.Less(t, len(text), 64<<10, "the row holds digests, not the oversized fields")
			})
		}
	}
}

// TestProposeRefusesACallWithoutAgent: a call that names no agent, or an
// agent that is not one, is denied at propose with an audit row.
func TestProposeRefusesACallWithoutAgent(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	c := sendEmail("finance@example.com")
	c.Principal.Agent = ""
	tk, err := w.Gate.Propose(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Equal(t, "call names no agent", tk.Reason)
	for _, agent := range []string{"user:dana", "reports", "policy:x", "Agent:reports", "\u0430gent:reports",
		"agent:Reports", "agent:reports ", "agent:", "agent:re\u200bports"} {
		c.Principal.Agent = agent
		tk, err := w.Gate.Propose(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusDenied, tk.Status, agent)
		assert.Contains(t, tk.Reason, "well-formed ids", agent)
	}
}
