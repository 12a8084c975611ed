package gate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// namedApprover is an approver other than WebAuthn (a model-based one, a
// second channel) that answers in the name of user and checks nothing
// about groups: the Approver contract leaves that to the gate.
type namedApprover struct{ user string }

func (namedApprover) Options(context.Context, plug.Request) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func (a namedApprover) Verify(context.Context, plug.Request, []byte) (plug.Verified, error) {
	return plug.Verified{User: a.user, Evidence: []byte(`{"verdict":"approve"}`)}, nil
}

func (namedApprover) Recheck(context.Context, plug.Answer) error { return nil }

// TestApproveEnforcesTheGroupForEveryApprover: a tool routed to the
// "finance" group is approved only by a member of it, whichever Approver
// produced the answer. The gate checked the group on denials but left it
// to the WebAuthn approver on approvals, so any other approver's user
// outside the group approved.
func TestApproveEnforcesTheGroupForEveryApprover(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		user string
		want error
	}{
		{"user:fin", nil},
		{"user:mallory", stepup.ErrNotPermitted},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			h := stepuptest.NewGateWith(t, refundCatalog(t, "finance"), namedApprover{tt.user},
				gate.WithApproverGroup("finance", "user:fin"))
			tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "issue_refund",
				Args: []byte(`{"order":"A-17","amount":120}`), Session: "s", Principal: agentFor("user:dana")})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			_, err = h.Gate.Desk().Approve(ctx, tk.ID, []byte(`yes`))
			got, gerr := h.Gate.Ticket(ctx, tk.ID)
			require.NoError(t, gerr)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
				assert.Equal(t, stepup.StatusPending, got.Status, "an approver outside the group decided nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, got.Status)
		})
	}
}
