package gate_test

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
)

// TestCustomRendererCardIsWhatIsSigned: a card a renderer of one's own
// draws is the card the approver is shown, the card the receipt keeps,
// and the card whose hash the passkey signed. Changing any one character
// of what it shows, even with the card hash recomputed to match, leaves a
// receipt whose signature no longer verifies.
func TestCustomRendererCardIsWhatIsSigned(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithRenderer(mailCards{}))
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
	require.NoError(t, err)
	shown := p.Card.Visible()
	assert.Contains(t, shown, `"Empfänger": "finance@example.com"`)
	assert.Contains(t, shown, `Betreff: "Q3 summary"`)
	got, err := card.HashJSON(p.CardJSON)
	require.NoError(t, err)
	require.Equal(t, p.Card.Hash(), got)

	_, err = w.Approve(tk.ID)
	require.NoError(t, err)
	r, err := w.Gate.Desk().Receipt(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, p.CardJSON, []byte(r.Card), "the receipt keeps the card the approver saw")
	assert.Equal(t, p.Card.Hash(), r.CardHash)
	key := trustedKeyOf(t, w.Authenticator)
	res, err := receipt.Verify(r, key, rpPolicy)
	require.NoError(t, err)
	require.True(t, res.Valid)

	// Every character of the shown value, changed in the card the
	// receipt carries, with the card hash made to match the new card.
	value := []byte("finance@example.com")
	at := bytes.Index(r.Card, value)
	require.GreaterOrEqual(t, at, 0)
	for i := range value {
		forged := *r
		forged.Card = bytes.Clone(r.Card)
		if forged.Card[at+i] == 'x' {
			forged.Card[at+i] = 'y'
		} else {
			forged.Card[at+i] = 'x'
		}
		forged.CardHash, err = card.HashJSON(forged.Card)
		require.NoError(t, err)
		require.NotEqual(t, r.CardHash, forged.CardHash)
		res, err := receipt.Verify(&forged, key, rpPolicy)
		assert.False(t, err == nil && res.Valid, "a card changed at %d still verifies", i)
		// The card alone changed, its hash left as signed: refused too.
		forged.CardHash = r.CardHash
		res, err = receipt.Verify(&forged, key, rpPolicy)
		assert.False(t, err == nil && res.Valid, "a card changed at %d under the old hash still verifies", i)
	}
}

// drifting draws its card as mailCards does the first time and, from the
// second render on, with one change: what the approver would be shown is
// not what was stored at Propose.
type drifting struct {
	n      atomic.Int64
	change func(id string, lines []card.Line) (string, []card.Line)
}

func (d *drifting) RenderSealed(s canon.Sealed, c card.Context) (*card.Card, error) {
	to, _ := s.Args().Get("to")
	id, lines := "acme.mail/v1", []card.Line{{Label: "Empfänger", Value: to.String()}}
	if d.n.Add(1) > 1 {
		id, lines = d.change(id, lines)
	}
	return card.Custom(id, s, c, lines)
}

// TestCustomRendererThatDriftsIsRefused: a custom renderer whose card
// differs in any way between the render stored at Propose and the one
// the approver would be shown is refused at Prompt, so nobody signs a
// card other than the stored one.
func TestCustomRendererThatDriftsIsRefused(t *testing.T) {
	changes := map[string]func(string, []card.Line) (string, []card.Line){
		"one character of a value": func(id string, l []card.Line) (string, []card.Line) {
			l[0].Value = strings.Replace(l[0].Value, "e", "\u0435", 1) // Cyrillic e
			return id, l
		},
		"a label": func(id string, l []card.Line) (string, []card.Line) {
			l[0].Label = "An"
			return id, l
		},
		"a line more": func(id string, l []card.Line) (string, []card.Line) {
			return id, append(l, card.Line{Label: "Kopie", Value: "attacker@example.net"})
		},
		"a line less": func(id string, _ []card.Line) (string, []card.Line) { return id, nil },
		"the renderer's name": func(_ string, l []card.Line) (string, []card.Line) {
			return "acme.mail/v2", l
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, gate.WithRenderer(&drifting{change: change}))
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			_, err = w.Gate.Desk().Prompt(ctx, tk.ID)
			require.ErrorIs(t, err, stepup.ErrEffectChanged)
			_, err = w.Approve(tk.ID)
			require.Error(t, err)
			got, err := w.Gate.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, got.Status, "nothing was approved")
		})
	}
}
