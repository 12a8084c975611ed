package gate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

type (
	world    = stepuptest.World
	recorder = stepuptest.Recorder
)

func newWorld(t *testing.T, opts ...gate.Option) *world { return stepuptest.NewWorld(t, opts...) }

func sendEmail(to string) stepup.Call { return stepuptest.SendEmail(to) }

func reordered(c stepup.Call) stepup.Call {
	c.Args = json.RawMessage(`{ "attachment": "q3.csv", "subject": "Q3 summary", "to": "finance@example.com" }`)
	return c
}

func TestSeedPolicyDecisions(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for _, tt := range stepuptest.SeedDecisions() {
		t.Run(tt.Tool, func(t *testing.T) {
			tk, err := w.Gate.Propose(ctx, stepup.Call{Tool: tt.Tool, Args: json.RawMessage(tt.Args),
				Task: "t-42", Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
			require.NoError(t, err)
			assert.Equal(t, tt.Status, tk.Status)
			assert.Equal(t, tt.Reason, tk.Reason)
		})
	}
}

// TestSeedSevenCases reproduces the seven executor decisions of the reference program's
// program with the same outcomes.
func TestSeedSevenCases(t *testing.T) {
	ctx := context.Background()

	t.Run("1 the approved call, keys reordered, executes", func(t *testing.T) {
		w := newWorld(t)
		tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		again, err := w.Gate.Propose(ctx, reordered(sendEmail("finance@example.com")))
		require.NoError(t, err)
		assert.Equal(t, tk.Digest, again.Digest, "reordered keys hash the same")
		assert.Equal(t, tk.ID, again.ID, "the duplicate merges into the pending ticket")
		_, err = w.Approve(tk.ID)
		require.NoError(t, err)
		res, err := w.Gate.Execute(ctx, tk.ID)
		require.NoError(t, err)
		assert.JSONEq(t, `{"sent":true}`, string(res.Output))
		assert.Equal(t, 1, w.Exec.Count())
	})

	t.Run("2 the same approval again is refused as used", func(t *testing.T) {
		w := newWorld(t)
		tk := approved(t, w, sendEmail("finance@example.com"))
		_, err := w.Gate.Execute(ctx, tk.ID)
		require.NoError(t, err)
		w.Clock.Advance(10 * time.Second)
		_, err = w.Gate.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrConsumed)
		assert.Equal(t, 1, w.Exec.Count())
	})

	t.Run("3 recipient changed after approval is refused", func(t *testing.T) {
		w := newWorld(t)
		tk := approved(t, w, sendEmail("finance@example.com"))
		changed, err := w.Gate.Propose(ctx, sendEmail("finance@exarnple.com"))
		require.NoError(t, err)
		assert.NotEqual(t, tk.Digest, changed.Digest)
		assert.Equal(t, stepup.StatusPending, changed.Status, "the changed call needs its own approval")
		_, err = w.Gate.Execute(ctx, changed.ID)
		assert.ErrorIs(t, err, stepup.ErrNotApproved)
		assert.Equal(t, 0, w.Exec.Count())
	})

	t.Run("4 attachment edited after approval is refused", func(t *testing.T) {
		w := newWorld(t)
		tk := approved(t, w, sendEmail("finance@example.com"))
		f, err := os.OpenFile(filepath.Join(w.Dir, "q3.csv"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("note,see attached instructions\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = w.Gate.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrEffectChanged)
		assert.Equal(t, 0, w.Exec.Count())
	})

	t.Run("5 used 20 minutes later is refused as expired", func(t *testing.T) {
		w := newWorld(t)
		tk := approved(t, w, sendEmail("finance@example.com"))
		w.Clock.Advance(20 * time.Minute)
		_, err := w.Gate.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrExpired)
		got, err := w.Gate.Wait(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusExpired, got.Status)
		assert.Equal(t, 0, w.Exec.Count())
	})

	t.Run("6 digest swapped in the evidence is refused as a bad signature", func(t *testing.T) {
		w := newWorld(t)
		orig, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		changed, err := w.Gate.Propose(ctx, sendEmail("finance@exarnple.com"))
		require.NoError(t, err)
		forged := swapChallenge(t, w, orig.ID, changed.ID)
		_, err = w.Gate.Desk().Approve(ctx, changed.ID, forged)
		var ae *passkey.AssertionError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "signature", ae.Check)
	})

	t.Run("7 the agent approving its own call is refused", func(t *testing.T) {
		w := newWorld(t)
		_, err := w.Enrollment.Invite(ctx, "agent:reports")
		assert.ErrorIs(t, err, stepup.ErrNotPermitted, "agents cannot be invited to enroll")
		// Even a credential that reached the store some other way does not
		// let the agent approve.
		agentKey := plantCredential(t, w, "agent:reports")
		tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		_, err = stepuptest.Approve(ctx, w.Gate.Desk(), agentKey, tk.ID, stepuptest.WithCredential(agentKey.CredentialIDs()[0]))
		assert.ErrorIs(t, err, stepup.ErrNotPermitted)
		got, err := w.Gate.Ticket(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, got.Status)
	})
}

// approved proposes c and approves it as the harness's approver.
func approved(t *testing.T, w *world, c stepup.Call) stepup.Ticket {
	t.Helper()
	tk, err := w.Gate.Propose(context.Background(), c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	got, err := w.Approve(tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status)
	return got
}
