package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// floorDesk is a gate whose e-mails and refunds go to the finance group
// (Dana, Erin), with practice copies after every e-mail and a second
// person for refunds from anyone below the catch floor.
type floorDesk struct {
	*stepuptest.Harness
	erin *stepuptest.Authenticator
	n    int
	// tweaks are applied to Dana's every answer to a practice copy.
	tweaks []stepuptest.Tweak
}

func newFloorDesk(t *testing.T, opts ...gate.Option) *floorDesk {
	t.Helper()
	cat, err := policy.NewCatalog("v1",
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible, Approvers: "finance"},
		policy.Tool{Name: "send_email", Class: card.ClassExternal, Approvers: "finance"})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat, append([]gate.Option{gate.WithApproverGroup("finance", stepuptest.Approver, "user:erin"),
		gate.WithExecutor("issue_refund", &recorder{}), gate.WithExecutor("send_email", &recorder{}),
		gate.WithPractice("finance", 1), gate.WithoutFloodControlUnsafe(), gate.WithDwell(0)}, opts...)...)
	return &floorDesk{Harness: h, erin: h.Enroll(t, "user:erin")}
}

func (f *floorDesk) propose(t *testing.T, tool, args string) stepup.TicketID {
	t.Helper()
	f.n++
	tk, err := f.Gate.Propose(context.Background(), stepup.Call{Tool: tool, Args: json.RawMessage(args),
		Session: fmt.Sprintf("s-%d", f.n), Principal: agentFor("user:frank")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	return tk.ID
}

// practise has Dana decide n practice copies (one after each e-mail),
// missing the first misses of them; the e-mails are left pending.
func (f *floorDesk) practise(t *testing.T, n, misses int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		real := f.propose(t, "send_email", fmt.Sprintf(`{"to":"finance+%d@example.com","subject":"q"}`, f.n))
		require.NoError(t, f.Gate.Settle(ctx))
		q, err := f.Gate.Desk().Queue(ctx, stepuptest.Approver, 1000)
		require.NoError(t, err)
		decided := false
		for _, e := range q {
			if e.Ticket.ID == real {
				continue
			}
			if _, err := f.Gate.Ticket(ctx, e.Ticket.ID); err == nil {
				continue // a real one
			}
			if i < misses {
				_, err = f.Approve(e.Ticket.ID, f.tweaks...)
			} else {
				_, err = f.Deny(e.Ticket.ID, "a look-alike", f.tweaks...)
			}
			require.NoError(t, err)
			decided = true
			break
		}
		require.True(t, decided, "a practice copy followed e-mail %d", i)
	}
}

// TestSecondPersonBelowTheCatchFloor: an approver who missed enough
// practice requests that their whole interval lies below the floor
// cannot approve a refund alone (nothing is approved, the ticket waits
// for Erin), can still deny one, and can still approve the classes not
// named; a few misses name nobody; and catching practice requests brings
// them back once the reading ages out.
func TestSecondPersonBelowTheCatchFloor(t *testing.T) {
	ctx := context.Background()
	refund := `{"order":"o-7","amount":40}`
	for _, tc := range []struct {
		name           string
		misses, caught int
		alone          bool
	}{
		{"no practice decided", 0, 0, true},
		{"two misses are too few to tell", 2, 0, true},
		{"five misses of five", 5, 0, false},
		{"nine of ten missed", 9, 1, false},
		{"half caught", 4, 4, true},
		{"mostly caught", 1, 9, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFloorDesk(t, gate.WithSecondPersonBelowFloor(figures.DefaultCatchFloor, 24*time.Hour, card.ClassIrreversible))
			f.practise(t, tc.misses+tc.caught, tc.misses)
			id := f.propose(t, "issue_refund", refund)
			got, err := f.Approve(id)
			if tc.alone {
				require.NoError(t, err)
				assert.Equal(t, stepup.StatusApproved, got.Status)
				return
			}
			require.ErrorIs(t, err, plug.ErrSecondPersonNeeded)
			require.ErrorIs(t, err, stepup.ErrNotPermitted)
			tk, err := f.Gate.Ticket(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, tk.Status, "nothing was approved")
			_, err = f.Gate.Execute(ctx, id)
			require.ErrorIs(t, err, stepup.ErrNotApproved)
			got, err = stepuptest.Approve(ctx, f.Gate.Desk(), f.erin, id)
			require.NoError(t, err, "another person of the group approves it")
			assert.Equal(t, stepup.StatusApproved, got.Status)
			_, err = f.Gate.Execute(ctx, id)
			require.NoError(t, err)

			denied, err := f.Deny(f.propose(t, "issue_refund", refund), "not this one")
			require.NoError(t, err, "a denial always counts")
			assert.Equal(t, stepup.StatusDenied, denied.Status)
			mail := f.propose(t, "send_email", `{"to":"legal@example.com","subject":"q"}`)
			_, err = f.Approve(mail)
			require.NoError(t, err, "external calls are not named")

			// Recovering: enough catches lift the interval over the floor,
			// once the reading is older than BelowFloorMaxAge.
			f.practise(t, 30, 0)
			again := f.propose(t, "issue_refund", refund)
			_, err = f.Approve(again)
			require.ErrorIs(t, err, plug.ErrSecondPersonNeeded, "the reading still stands")
			f.Clock.Advance(gate.BelowFloorMaxAge)
			got, err = f.Approve(again)
			require.NoError(t, err, "caught enough to approve alone again")
			assert.Equal(t, stepup.StatusApproved, got.Status)
		})
	}
}

// TestSecondPersonRefusedAnswerNeverCountsLater: Dana's answer, refused
// because she was below the floor, is refused for good: posted again
// once she has caught enough to approve alone, it approves nothing,
// though her authenticator (without a signature counter, as most synced
// passkeys are) would pass it again. She signs again and approves.
func TestSecondPersonRefusedAnswerNeverCountsLater(t *testing.T) {
	ctx := context.Background()
	f := newFloorDesk(t, gate.WithSecondPersonBelowFloor(figures.DefaultCatchFloor, 24*time.Hour, card.ClassIrreversible))
	counterless := stepuptest.WithSignCount(0)
	f.tweaks = []stepuptest.Tweak{counterless}
	f.practise(t, 5, 5)
	id := f.propose(t, "issue_refund", `{"order":"o-7","amount":40}`)
	p, err := f.Gate.Desk().Prompt(ctx, id)
	require.NoError(t, err)
	answer, err := f.Authenticator.Assert(p.Options, counterless)
	require.NoError(t, err)
	_, err = f.Gate.Desk().Approve(ctx, id, answer)
	require.ErrorIs(t, err, plug.ErrSecondPersonNeeded)

	f.practise(t, 30, 0)
	f.Clock.Advance(gate.BelowFloorMaxAge)
	_, err = f.Gate.Desk().Approve(ctx, id, answer)
	require.ErrorIs(t, err, stepup.ErrBadAssertion, "the refused answer again, once she may approve alone")
	tk, err := f.Gate.Ticket(ctx, id)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	got, err := f.Approve(id, counterless)
	require.NoError(t, err, "a new answer, signed again")
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

// TestSecondPersonWithoutTheOption: the same misses, without the option,
// leave the approver free to approve alone (the test above would catch a
// gate that ignored the option).
func TestSecondPersonWithoutTheOption(t *testing.T) {
	f := newFloorDesk(t)
	f.practise(t, 6, 6)
	got, err := f.Approve(f.propose(t, "issue_refund", `{"order":"o-7","amount":40}`))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

func TestWithSecondPersonBelowFloorRefusesBadSettings(t *testing.T) {
	for _, o := range []gate.Option{
		gate.WithSecondPersonBelowFloor(0, time.Hour, card.ClassIrreversible),
		gate.WithSecondPersonBelowFloor(1.5, time.Hour, card.ClassIrreversible),
		gate.WithSecondPersonBelowFloor(0.5, 0, card.ClassIrreversible),
		gate.WithSecondPersonBelowFloor(0.5, gate.MaxMetricsWindow+time.Hour, card.ClassIrreversible),
		gate.WithSecondPersonBelowFloor(0.5, time.Hour),
	} {
		st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
		_, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), o)
		require.ErrorIs(t, err, stepup.ErrConfig)
	}
}
