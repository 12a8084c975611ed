package gate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

var errSMTP = errors.New("smtp: 550 mailbox unavailable")

// A failing executor spends the approval once and says so with
// ErrExecutorFailed, wrapping the executor's own error for in-process
// callers; a second Execute is refused as used, never a retry.
func TestExecutorFailureSpendsTheApprovalOnce(t *testing.T) {
	ctx := context.Background()
	runs := 0
	h := stepuptest.NewGate(t, nil, gate.WithExecutor("send_email",
		plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			runs++
			return nil, errSMTP
		})))
	call := sendEmail("finance@example.com")
	call.Args = []byte(`{"to":"finance@example.com","subject":"Q3 summary"}`)
	tk, err := h.Gate.Propose(ctx, call)
	require.NoError(t, err)
	_, err = h.Approve(tk.ID)
	require.NoError(t, err)

	_, err = h.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrExecutorFailed)
	assert.ErrorIs(t, err, errSMTP)
	_, err = h.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrConsumed)
	assert.Equal(t, 1, runs)
}
