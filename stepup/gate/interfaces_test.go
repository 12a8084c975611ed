package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/store"
)

// brandRenderer renders with card and counts.
type brandRenderer struct{ n atomic.Int64 }

func (r *brandRenderer) RenderSealed(s canon.Sealed, c card.Context) (*card.Card, error) {
	r.n.Add(1)
	c.Title = "ACME: " + c.Title
	return card.RenderSealed(s, c)
}

// closedFlood refuses every admission and counts decisions.
type closedFlood struct{ decided atomic.Int64 }

func (*closedFlood) Admit(context.Context, flood.Request) error {
	return &flood.LimitError{Err: flood.ErrRateLimited, Scope: flood.ScopeUser}
}
func (f *closedFlood) Decided(context.Context, flood.Request, bool) error {
	f.decided.Add(1)
	return nil
}
func (*closedFlood) Caps() store.Caps { return store.Caps{} }

// noGrants covers nothing.
type noGrants struct{ asked atomic.Int64 }

func (g *noGrants) Target(context.Context, string, canon.Sealed) (string, error) {
	g.asked.Add(1)
	return "", errors.New("no grants here")
}

// TestGateUsesItsPluggableParts: each interface the gate consumes is
// the one it is given: Renderer draws every card (its words are on the
// card whose hash is signed), Flood admits, Grants decides coverage.
func TestGateUsesItsPluggableParts(t *testing.T) {
	ctx := context.Background()
	t.Run("Renderer", func(t *testing.T) {
		r := &brandRenderer{}
		w := newWorld(t, gate.WithRenderer(r))
		tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
		require.NoError(t, err)
		assert.Contains(t, p.Card.Text(), "ACME: ")
		assert.Equal(t, int64(2), r.n.Load(), "parked and re-rendered for the approver")
		_, err = w.Approve(tk.ID)
		require.NoError(t, err)
	})
	t.Run("Flood", func(t *testing.T) {
		f := &closedFlood{}
		w := newWorld(t, gate.WithFlood(f))
		tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusDenied, tk.Status)
		assert.Contains(t, tk.Reason, "rate limited")
		allowed, err := w.Gate.Propose(ctx, stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
			Session: "s", Principal: agentFor("user:dana")})
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusAllowed, allowed.Status, "calls no person is asked about are not admitted")
	})
	t.Run("Grants", func(t *testing.T) {
		gr := &noGrants{}
		w := newWorld(t, gate.WithCoverage(gr))
		c := sendEmail("finance@example.com")
		c.Grant = "g-1"
		tk, err := w.Gate.Propose(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, tk.Status, "not covered: a person is asked")
		assert.Equal(t, int64(1), gr.asked.Load())
	})
}
