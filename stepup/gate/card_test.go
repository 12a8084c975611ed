package gate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gate gives the card its trusted context: a recipient that imitates a
// domain the catalog trusts is flagged on the card the approver sees, and
// the one it imitates is named. Without the catalog's Trusted list the card
// could only show exarnple.com as an ordinary domain.
func TestGateCardFlagsLookalikesOfTrustedDomains(t *testing.T) {
	w := newWorld(t)
	desk := w.Gate.Desk()

	p, err := desk.Prompt(context.Background(), pending(t, w, "finance@exarnple.com"))
	require.NoError(t, err)
	text := p.Card.Text()
	assert.Contains(t, text, "LOOKS LIKE a trusted domain but is a different one: example.com")

	honest, err := desk.Prompt(context.Background(), pending(t, w, "finance@example.com"))
	require.NoError(t, err)
	assert.NotContains(t, honest.Card.Text(), "LOOKS LIKE", "no warning on the real domain")
	assert.True(t, strings.Contains(string(honest.CardJSON), `"trusted":true`), "the real domain is marked trusted")
}
