package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// A call whose text is not UTF-8 is denied like any refused call, with an
// audit row that keeps the chain verifiable; the store never sees it.
func TestCallTextMustBeUTF8(t *testing.T) {
	ctx := context.Background()
	for name, edit := range map[string]func(*stepup.Call){
		"session":   func(c *stepup.Call) { c.Session = "sess-\xff" },
		"task":      func(c *stepup.Call) { c.Task = "t-\xfe" },
		"taint":     func(c *stepup.Call) { c.Taint = []string{"read \xc3"} },
		"rationale": func(c *stepup.Call) { c.Rationale = "because \xff" },
		"user":      func(c *stepup.Call) { c.Principal = canon.Principal{User: "user:\xff", Agent: "agent:reports"} },
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			c := sendEmail("finance@example.com")
			edit(&c)
			tk, err := w.Gate.Propose(ctx, c)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusDenied, tk.Status)
			assert.Equal(t, "call text is not valid UTF-8", tk.Reason)

			rows, err := w.Store.AuditRange(ctx, time.Time{}, time.Now().Add(time.Hour))
			require.NoError(t, err)
			require.NotEmpty(t, rows)
			last := rows[len(rows)-1]
			assert.Equal(t, audit.DecisionDeny, last.Decision)
			assert.NoError(t, audit.VerifyChain(rows, canon.Digest{}))
		})
	}
}

// An Execute whose context has ended spends nothing: the approval stays
// approved and a later Execute runs the call once.
func TestExecuteWithEndedContextSpendsNothing(t *testing.T) {
	w := newWorld(t)
	tk := approved(t, w, sendEmail("finance@example.com"))
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := w.Gate.Execute(ended, tk.ID)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, w.Exec.Count())

	_, err = w.Gate.Execute(context.Background(), tk.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, w.Exec.Count())
}
