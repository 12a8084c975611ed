package gateway_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
)

// TestDeclinedPageSaysDeclined: a ticket cancelled because the person it
// was sent to declined to open it reads so, not as the agent's
// withdrawal; any other cancel reason still reads as the agent's.
func TestDeclinedPageSaysDeclined(t *testing.T) {
	text, ok := gateway.VerdictOf(stepup.Ticket{Status: stepup.StatusCancelled, Reason: stepup.ReasonDeclined})
	require.True(t, ok)
	assert.Contains(t, text, "declined to open it")
	text, ok = gateway.VerdictOf(stepup.Ticket{Status: stepup.StatusCancelled, Reason: "declined"})
	require.True(t, ok)
	assert.Contains(t, text, "cancelled by the agent before a decision")
}
