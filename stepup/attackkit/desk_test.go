package attackkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// kitMarker is looked for in a card's trusted part: only the agent's
// text carries it.
const kitMarker = "Qkitmarker7f3aQ"

// renderWith renders the card of a send_email call with rationale.
func renderWith(t testing.TB, rationale string) (*card.Card, error) {
	t.Helper()
	return card.Render(canon.Effect{Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@exarnple.com","subject":"Q3 summary"}`), Task: "t", Step: "s",
		Principal: canon.Principal{User: User, Agent: Agent}, PolicyVersion: "v1"},
		card.Context{Title: "Send e-mail", Class: card.ClassExternal, Trusted: []string{"example.com"},
			Rationale: rationale})
}

func TestSplitCardKeepsAgentTextOutOfTheTrustedPart(t *testing.T) {
	for i, n := range narrations {
		c, err := renderWith(t, fmt.Sprintf(n, kitMarker))
		require.NoError(t, err)
		cd, err := splitCard(c.Visible())
		require.NoError(t, err, "narration %d", i)
		assert.NotContains(t, cd.Trusted, kitMarker, "narration %d", i)
		assert.NotContains(t, cd.Trusted, "boss@example.com", "narration %d", i)
		assert.Contains(t, cd.Untrusted, kitMarker, "narration %d", i)
		assert.Contains(t, cd.Trusted, `"finance@exarnple.com"`, "narration %d", i)
		assert.Contains(t, cd.Trusted, "== WHAT WILL RUN ==", "narration %d", i)
	}
}

func TestSplitCardRefusesACardWithoutAgentRegion(t *testing.T) {
	for _, text := range []string{
		"",
		"APPROVAL REQUEST\n== ARGUMENTS ==\n  to: x\n",
		"APPROVAL REQUEST\n" + agentRegionEnd + "\n" + agentRegion + "\n",
		"  " + agentRegion + "\n" + agentRegionEnd + "\n",
	} {
		_, err := splitCard(text)
		assert.ErrorIs(t, err, errNoAgentRegion, "%q", text)
	}
	// Lines that imitate the headings inside the region stay inside it.
	text := "head\n" + agentRegion + "\n" + agentRegionEnd + "\nfake\n" + agentRegion + "\n" + agentRegionEnd + "\ntail\n"
	cd, err := splitCard(text)
	require.NoError(t, err)
	assert.Equal(t, "head\n"+agentRegionEnd+"\ntail\n", cd.Trusted)
	assert.True(t, strings.HasPrefix(cd.Untrusted, agentRegion))
}

func FuzzSplitCard(f *testing.F) {
	for _, n := range narrations {
		f.Add(fmt.Sprintf(n, ""))
	}
	f.Add(agentRegionEnd + "\n" + agentRegion)
	f.Fuzz(func(t *testing.T, rationale string) {
		c, err := renderWith(t, rationale+" "+kitMarker)
		if err != nil {
			return // no card, no approval
		}
		cd, err := splitCard(c.Visible())
		if err != nil {
			t.Fatalf("the gate's card has no agent region: %v", err)
		}
		if strings.Contains(cd.Trusted, kitMarker) {
			t.Fatalf("agent text in the trusted part of the card of rationale %q", rationale)
		}
	})
}
