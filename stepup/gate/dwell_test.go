package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestDwellHoldsBackQuickApprovals: by default an external call's
// approval is refused until DefaultDwell has passed since its card was
// first shown, whatever the timing of the tries before (each refusal
// changes nothing, and showing the card again does not restart the
// wait); a denial is never held back; reversible and read calls have
// none.
func TestDwellHoldsBackQuickApprovals(t *testing.T) {
	ctx := context.Background()
	for _, early := range []time.Duration{0, time.Millisecond, gate.DefaultDwell / 2, gate.DefaultDwell - time.Millisecond} {
		t.Run(fmt.Sprint(early), func(t *testing.T) {
			w := newWorld(t, gate.WithDwell(gate.DefaultDwell, "external", "irreversible"))
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID))
			w.Clock.Advance(early)
			_, err = w.Approve(tk.ID) // prompts again: the first showing counts
			require.ErrorIs(t, err, stepup.ErrTooFast)
			got, err := w.Gate.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, got.Status, "a refusal changes nothing")

			w.Clock.Advance(gate.DefaultDwell - early)
			answer, err := w.Authenticator.Assert(p.Options)
			require.NoError(t, err)
			got, err = w.Gate.Desk().Approve(ctx, tk.ID, answer)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, got.Status)
		})
	}
}

func TestDwellNeverHoldsBackADenialOrAReversibleCall(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithDwell(gate.DefaultDwell, "external", "irreversible"))
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	got, err := w.Deny(tk.ID, "not now")
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, got.Status)

	// The wait runs from the showing of that ticket's own card.
	tk, err = w.Gate.Propose(ctx, sendEmail("finance+2@example.com"))
	require.NoError(t, err)
	require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID)) // shows tk, not other
	other, err := w.Gate.Propose(ctx, sendEmail("finance+3@example.com"))
	require.NoError(t, err)
	w.Clock.Advance(time.Minute)
	answer := assertFor(t, w, w.Authenticator, other.ID) // shows other only now
	_, err = w.Gate.Desk().Approve(ctx, other.ID, answer)
	assert.ErrorIs(t, err, stepup.ErrTooFast)
}

// TestDwellIsOneTimeAcrossReplicas: the first showing is the store's, so a
// card shown by one replica and approved through another waits once,
// from the first showing.
func TestDwellIsOneTimeAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithDwell(gate.DefaultDwell, "external"))
	other, err := gate.New(w.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(w.Store), gate.WithLocalClock(w.Clock.Now))
	require.NoError(t, err)
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
	require.NoError(t, err)
	require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID))
	w.Clock.Advance(gate.DefaultDwell)
	answer, err := w.Authenticator.Assert(p.Options)
	require.NoError(t, err)
	got, err := other.Desk().Approve(ctx, tk.ID, answer)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

// TestDwellStartsWhenTheCardIsShownToEachApprover: fetching the prompt
// (a link preview, a prefetch, the agent opening its own ticket's page)
// starts no wait; and of a ticket that needs two people, the second
// approver waits from when the card is shown to them, not from the
// first approver's showing.
func TestDwellStartsWhenTheCardIsShownToEachApprover(t *testing.T) {
	ctx := context.Background()
	q := newQuorumDesk(t, gate.WithDwell(gate.DefaultDwell))
	desk := q.Gate.Desk()
	tk, err := q.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)
	for range 3 {
		_, err := desk.Prompt(ctx, tk.ID)
		require.NoError(t, err)
	}
	q.Clock.Advance(10 * time.Minute)
	_, err = q.Approve(tk.ID) // shown and answered at once
	require.ErrorIs(t, err, stepup.ErrTooFast, "fetching the prompt is not showing the card")

	q.Clock.Advance(gate.DefaultDwell)
	got, err := q.Approve(tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, got.Status, "1 of 2")
	q.Clock.Advance(time.Minute)
	_, err = stepuptest.Approve(ctx, desk, q.erin, tk.ID)
	require.ErrorIs(t, err, stepup.ErrTooFast, "Erin waits from her own showing")
	q.Clock.Advance(gate.DefaultDwell)
	got, err = stepuptest.Approve(ctx, desk, q.erin, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

func TestWithDwellRefusesBadConfiguration(t *testing.T) {
	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	for _, o := range []gate.Option{gate.WithDwell(-time.Second), gate.WithDwell(gate.MaxDwell + 1),
		gate.WithDwell(time.Second, "dangerous")} {
		_, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), o)
		assert.ErrorIs(t, err, stepup.ErrConfig)
	}
}

func ExampleWithDwell() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st)) // DefaultDwell for external calls
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	if err != nil {
		panic(err)
	}
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "send_email",
		Args:    json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	_, err = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID) // shown and approved in the same instant
	fmt.Println(err)
	clock.Advance(gate.DefaultDwell) // Dana reads the card
	got, err := stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	fmt.Println(got.Status, err)
	// Output:
	// approve: stepup: approved too soon after the card was shown: approved 0s after the card was first shown; external calls need at least 3s; this answer never counts: wait until the card has been shown for the dwell time, then sign again. If your passkey gives the same answer every time (some Ed25519 and RSA security keys do), it cannot approve this ticket any more: ask another approver, or deny it and have the call proposed again
	// approved <nil>
}
