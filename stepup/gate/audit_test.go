package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
)

func TestEveryDecisionIsAnAuditRow(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	_, err := w.Gate.Propose(ctx, stepup.Call{Tool: "run_shell", Args: []byte(`{"cmd":"curl secret-token"}`),
		Task: "t-42", Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	tk := approved(t, w, sendEmail("finance@example.com"))
	_, err = w.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, tk.ID)
	require.Error(t, err)

	rows, err := w.Store.AuditRange(ctx, time.Time{}, stepupFar)
	require.NoError(t, err)
	var decisions []string
	for _, r := range rows {
		decisions = append(decisions, r.Decision)
		assert.Empty(t, r.Args, "arguments only by digest")
		assert.NotContains(t, r.Reason, "secret-token")
	}
	assert.Equal(t, []string{audit.DecisionDeny, audit.DecisionNeedsApproval, audit.DecisionApproved,
		audit.DecisionExecuting, audit.DecisionExecuted, audit.DecisionNotRun}, decisions)
	require.NoError(t, audit.VerifyChain(rows, canon.Digest{}))

	approved := rows[2]
	assert.Equal(t, string(tk.ID), approved.TicketID)
	assert.Equal(t, tk.Digest, approved.ArgsDigest)
	assert.Equal(t, "user:dana", approved.Approver)
	assert.Len(t, approved.Nonce, 64)
	assert.Len(t, approved.CardHash, 64)
	assert.Equal(t, "2026-10-30.1", approved.PolicyVersion)
	assert.Equal(t, "external", approved.EffectClass)
	assert.Equal(t, rows[3].IdempotencyKey, rows[4].IdempotencyKey, "spent and run with one key")
	executed := rows[4]
	assert.NotEmpty(t, executed.IdempotencyKey)
	assert.Equal(t, "ok", executed.Result)
	assert.Equal(t, "approval already used", rows[5].Reason)
	for i := 1; i < len(rows); i++ {
		assert.GreaterOrEqual(t, rows[i].Time, rows[i-1].Time, "audit times never decrease along the chain")
	}
}

func TestAuditArgsOnlyWhenOptedIn(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithAuditArgsUnsafe())
	_, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	rows, err := w.Store.AuditRange(ctx, time.Time{}, stepupFar)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.JSONEq(t, string(sendEmail("finance@example.com").Args), string(rows[0].Args))
}

var stepupFar = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
