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
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestQuorumWithARevokedPasskeyNeverRuns: a rule-of-two wire whose votes
// include one by a passkey revoked at any point before it runs (before
// the vote, between the votes, after the quorum) does not run; with no
// revocation it runs once (the control).
func TestQuorumWithARevokedPasskeyNeverRuns(t *testing.T) {
	ctx := context.Background()
	for _, when := range []string{"never", "before erin votes", "between the votes", "after the quorum"} {
		t.Run(when, func(t *testing.T) {
			cat, err := policy.NewCatalog("quorum-attack-1", policy.Tool{Name: "wire", Title: "Wire",
				Class: card.ClassIrreversible, Approvers: "finance", Quorum: 2})
			require.NoError(t, err)
			exec := &stepuptest.Recorder{}
			h := stepuptest.NewGate(t, cat, gate.WithExecutor("wire", exec),
				gate.WithApproverGroup("finance", "user:erin", "user:finn", "user:gus"))
			erin, finn, gus := h.Enroll(t, "user:erin"), h.Enroll(t, "user:finn"), h.Enroll(t, "user:gus")
			revoke := func() {
				h.Clock.Advance(time.Second)
				require.NoError(t, h.Enrollment.RevokeCredential(ctx, erin.CredentialIDs()[0], "user:ops", "lost"))
			}
			tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "wire", Args: json.RawMessage(`{"amount":9000}`),
				Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:treasury"}})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			if when == "before erin votes" {
				revoke()
			}
			_, erinErr := stepuptest.Approve(ctx, h.Gate.Desk(), erin, tk.ID)
			if when == "between the votes" {
				revoke()
			}
			_, _ = stepuptest.Approve(ctx, h.Gate.Desk(), finn, tk.ID)
			if when == "before erin votes" {
				assert.Error(t, erinErr, "a revoked passkey voted")
				_, _ = stepuptest.Approve(ctx, h.Gate.Desk(), gus, tk.ID)
			}
			if when == "after the quorum" {
				revoke()
			}
			_, err = h.Gate.Execute(ctx, tk.ID)
			switch when {
			case "never", "before erin votes": // finn and gus, or erin and finn, all live
				require.NoError(t, err)
				assert.Equal(t, 1, exec.Count())
			default:
				assert.Error(t, err, "ran on a revoked passkey's vote")
				assert.Zero(t, exec.Count(), "ran on a revoked passkey's vote")
			}
			_, err = h.Gate.Execute(ctx, tk.ID)
			assert.Error(t, err, "ran twice")
			assert.LessOrEqual(t, exec.Count(), 1, fmt.Sprint(when))
		})
	}
}
